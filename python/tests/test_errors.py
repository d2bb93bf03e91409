"""Bad inputs raise ValueError / OSError with the CLI's one-line message."""
import gzip
import json
import os

import pytest

import qprof
from conftest import cli_error_line, run_cli


def _cli_message(qprof_bin, path):
    r = run_cli(qprof_bin, "analyze", path, check=False)
    assert r.returncode == 2, r.stderr
    return cli_error_line(r)


@pytest.mark.parametrize(
    "name, content",
    [
        ("garbage.json", b"this is not a trace\n"),
        ("empty.json", b""),
        ("report.nsys-rep", b"\x00\x01binary nsys report"),
        ("metrics.ncu-rep", b"\x00\x02binary ncu report"),
        ("not_json.json", b"{\"traceEvents\": [ {\"ph\": \"X\", ]}\n"),
        ("no_events.json", b"{\"traceEvents\": 17}\n"),
    ],
)
def test_bad_input_raises_value_error_with_cli_message(name, content, tmp_path, qprof_bin):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError) as e:
        qprof.analyze(str(path))
    assert str(e.value) == _cli_message(qprof_bin, str(path))
    assert "\n" not in str(e.value)


_KERNEL = (b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, '
           b'"dur": 2.0, "args": {"device": 0, "stream": 7, "correlation": 1}}')


@pytest.mark.parametrize(
    "name, content",
    [
        # The cut falls in the middle of an event after the kernel (hex of distinct numbers
        # keeps the deflate stream long enough to cut well past the kernel).
        ("cut.json.gz",
         gzip.compress(b'{"traceEvents": [' + _KERNEL + b', {"ph": "X", "cat": "cpu_op", '
                       b'"args": {"pad": "' + b"".join(b"%x" % (i * 7919) for i in range(3000)) +
                       b'"}}]}')[:-200]),
        ("cut.json", b'{"traceEvents": [' + _KERNEL + b', {"ph": "X", '),
    ],
)
def test_truncated_input_keeps_what_was_read_as_the_cli_does(name, content, tmp_path, qprof_bin):
    # A file cut short after some kernels is not an error (README "Importing traces"): the
    # events before the cut are analysed, the source says truncated and a warning names the
    # byte offset.
    path = tmp_path / name
    path.write_bytes(content)
    r = run_cli(qprof_bin, "analyze", str(path), "--json", str(tmp_path / "cli.json"))
    assert "truncated: " in r.stdout and "the analysis covers the readable prefix" in r.stdout
    p = qprof.analyze(str(path))
    with open(tmp_path / "cli.json", encoding="utf-8") as f:
        assert p.to_dict() == json.load(f)
    assert p.to_dict()["sources"][0]["truncated"] is True
    assert p.to_dict()["totals"]["kernel_count"] == 1
    assert any(w["code"] == "truncated" and "ended at" in w["message"]
               for w in p.to_dict()["warnings"])


@pytest.mark.parametrize(
    "name, content",
    [
        ("cut.json.gz", gzip.compress(b'{"traceEvents": [{"ph": "X", "cat": "kernel"')[:30]),
        ("cut.json", b"{\"traceEvents\": [ {\"ph\": \"X\", "),
    ],
)
def test_cut_before_any_kernel_is_an_error_as_in_the_cli(name, content, tmp_path, qprof_bin):
    # Nothing to analyse: one line saying where the file was cut, exit 2 / ValueError.
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError) as e:
        qprof.analyze(str(path))
    assert str(e.value) == _cli_message(qprof_bin, str(path))
    assert "no kernel before the cut at" in str(e.value) and "byte" in str(e.value)


def test_missing_file_is_file_not_found(tmp_path):
    missing = str(tmp_path / "nope.json")
    with pytest.raises(FileNotFoundError) as e:
        qprof.analyze(missing)
    assert missing in str(e.value)
    with pytest.raises(OSError):
        qprof.read_trace(missing)


def test_unreadable_file_is_permission_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    p = tmp_path / "locked.json"
    p.write_text("{}")
    p.chmod(0)
    with pytest.raises(PermissionError):
        qprof.analyze(str(p))


def test_bad_options(testdata, tmp_path):
    trace = os.path.join(testdata, "kineto", "a100_triton_example.json.gz")
    with pytest.raises(ValueError, match="no-such-gpu"):
        qprof.analyze(trace, device="no-such-gpu")
    with pytest.raises(ValueError):
        qprof.analyze([])
    empty = tmp_path / "empty_cache"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no .cubin files"):
        qprof.analyze(trace, sass=str(empty))
    bad_model = tmp_path / "model.json"
    bad_model.write_text("{\"batch\": 4}")
    with pytest.raises(ValueError):
        qprof.analyze(trace, model=str(bad_model))
