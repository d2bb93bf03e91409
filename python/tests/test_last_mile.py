"""The last mile: exports of NVIDIA's reports, --sass on a cubin folder (Triton's cache
layout), help that points at docs, `qprof version`."""
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

import qprof
from conftest import cli_error_line, run_cli
from tracegen import write_kineto


def test_nsys_rep_gets_the_export_command(tmp_path, qprof_bin):
    rep = tmp_path / "run 1.nsys-rep"
    rep.write_bytes(b"\x00binary")
    msg = cli_error_line(run_cli(qprof_bin, "analyze", str(rep), check=False))
    stem = str(tmp_path / "run 1")
    assert msg.endswith(f"nsys export --type sqlite --output '{stem}.sqlite' '{rep}'"), msg
    with pytest.raises(ValueError) as e:
        qprof.analyze(str(rep))
    assert str(e.value) == msg


def test_ncu_rep_gets_the_csv_command(tmp_path, qprof_bin):
    rep = tmp_path / "kernels.ncu-rep"
    rep.write_bytes(b"\x00binary")
    msg = cli_error_line(run_cli(qprof_bin, "analyze", str(rep), check=False))
    assert f"ncu --import {rep} --csv --page raw > {tmp_path}/kernels.csv" in msg, msg


def test_version_ends_with_a_newline(qprof_bin):
    out = subprocess.run([qprof_bin, "version"], capture_output=True).stdout
    assert out.startswith(b"qprof ") and out.endswith(b"\n")
    assert qprof.__version__ in out.decode()


def test_help_points_at_docs_not_sources(qprof_bin):
    top = run_cli(qprof_bin, "--help").stdout
    commands = re.findall(r"^\s{2}(\w+)\s", top.split("SUBCOMMANDS:")[-1], re.M)
    assert "analyze" in commands
    for cmd in commands:
        text = run_cli(qprof_bin, cmd, "--help").stdout
        assert not re.search(r"\b[\w/]+\.(h|cc|cuh)\b", text), (cmd, text)


def _cuobjdump():
    """Where qprof looks too: PATH, the toolkit, the pip wheel nvidia-cuda-cuobjdump."""
    found = shutil.which("cuobjdump")
    if found:
        return found
    cands = ["/usr/local/cuda/bin/cuobjdump"]
    try:
        import nvidia

        for root in nvidia.__path__:
            cands += sorted(glob.glob(os.path.join(root, "cu*", "bin", "cuobjdump")))
    except ImportError:
        pass
    return next((c for c in cands if os.access(c, os.X_OK)), None)


def _extract_cubins(dest):
    libs = os.environ.get("QPROF_CUDA_KERNEL_LIBS")
    tool = _cuobjdump()
    if not libs:
        pytest.skip("no CUDA kernel library in this build (QPROF_CUDA=OFF or no nvcc)")
    if tool is None:
        pytest.skip("cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
    dest.mkdir()
    for lib in libs.split(";"):
        subprocess.run([tool, "-xelf", "all", lib], cwd=dest, check=True, capture_output=True)
    # A server's Triton cache holds the cubins of its own GPU: keep one architecture
    # (sm_120a, the RTX PRO 6000 of the story).
    return sorted(dest.glob("*sm_120a*.cubin"))


def test_sass_folder_laid_out_like_triton_cache(tmp_path, qprof_bin):
    # Cubins of our own MoE kernels (cuobjdump -xelf of the build's CUDA library), placed as
    # Triton's cache places them: <cache>/<hash>/<kernel>.cubin, plus files it also keeps.
    cubins = _extract_cubins(tmp_path / "elf")
    assert cubins
    cache = tmp_path / "triton-cache"
    for i, c in enumerate(cubins):
        d = cache / f"{i:02x}{'f' * 40}"
        d.mkdir(parents=True)
        shutil.copy(c, d / c.name)
        (d / (c.stem + ".json")).write_text("{}")
        (d / (c.stem + ".ptx")).write_text("// ptx")
    sass = run_cli(qprof_bin, "sass", str(cache), "--json", str(tmp_path / "s.json"))
    files = json.load(open(tmp_path / "s.json"))["files"]
    assert [os.path.basename(f["path"]) for f in files] == [c.name for c in cubins]
    kernels = [k for f in files for k in f["kernels"]]
    by_class = {}
    for k in kernels:
        by_class.setdefault(k["class"], k)
    assert "tensor" in by_class and "simt" in by_class, sass.stdout
    # A trace whose kernels carry those names: the SASS decides their class.
    picked = [by_class["tensor"], by_class["simt"]]
    trace = write_kineto(str(tmp_path / "t.json"),
                         [(k["demangled"], i * 100000, 60000 - 10000 * i, 7)
                          for i, k in enumerate(picked)])
    p = qprof.analyze(trace, sass=str(cache))
    rows = p.to_dict()["kernels"]
    assert len(rows) == 2
    for k, row in zip(picked, rows):  # rows by time: the tensor kernel took longer
        assert row["name"] == k["demangled"]
        assert row["evidence"] == "sass", row
        assert row["class"] == k["class"], (row, k)
    r = run_cli(qprof_bin, "analyze", trace, "--sass", str(cache), "--json",
                str(tmp_path / "p.json"))
    assert f"from {len(cubins)} cubins" in r.stderr, r.stderr
    cli = json.load(open(tmp_path / "p.json"))
    mod = p.to_dict()
    for key in sorted(set(cli) | set(mod)):
        assert cli.get(key) == mod.get(key), key
