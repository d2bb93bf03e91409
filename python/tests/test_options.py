"""Every `qprof analyze` and `qprof diff` option in Python, by the command's names, gives
what the command gives; notebook views are sized to their content; errors read as the
CLI's. Traces are written here (tracegen), so these run without the shared test data."""
import os
import re
import warnings

import pytest

import qprof
from conftest import cli_error_line, cli_json, run_cli
from tracegen import STEP, write_kineto


def _trace(folder, name, scale=1.0, steps=6):
    kernels, t = [], 0
    for _ in range(steps):
        for kname, dur in STEP:
            d = int(dur * scale)
            kernels.append((kname, t, d, 7))
            t += d + 1500
    os.makedirs(folder, exist_ok=True)
    return write_kineto(os.path.join(folder, name), kernels)


def test_analyze_takes_the_commands_options(tmp_path, qprof_bin):
    trace = _trace(str(tmp_path), "t.json")
    p = qprof.analyze(trace, tokens=32, steps=4, top=2, threads=1, label="x")
    totals = p.totals
    assert totals["tokens"] == 32 and totals["steps"] == 4
    assert p.to_dict() == cli_json(qprof_bin, tmp_path, "analyze", [trace], "--tokens", "32",
                                   "--steps", "4", "--threads", "1", "--label", "x")
    # top: the summary shows that many kernels, as `--top 2` does.
    cli = run_cli(qprof_bin, "analyze", trace, "--tokens", "32", "--steps", "4", "--top", "2",
                  "--label", "x").stdout
    assert p.summary(wide=True) == cli
    assert "Top kernels (2 of" in str(p)


def test_perfetto_option_writes_the_file(tmp_path):
    trace = _trace(str(tmp_path), "t.json")
    out = tmp_path / "t.perfetto.json"
    qprof.analyze(trace, perfetto=out)
    assert out.exists() and '"traceEvents"' in out.read_text()


def test_model_is_the_deprecated_name_of_model_shape(tmp_path):
    trace = _trace(str(tmp_path), "t.json")
    shape = tmp_path / "shape.json"
    shape.write_text('{"active_params": 1e9, "batch": 8}')
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        old = qprof.analyze(trace, model=str(shape))
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    new = qprof.analyze(trace, model_shape=shape)
    assert old.to_dict() == new.to_dict()
    with pytest.raises(ValueError):
        qprof.analyze(trace, model=str(shape), model_shape=shape)


def test_diff_per_side_options_equal_the_cli(tmp_path, qprof_bin):
    a = _trace(str(tmp_path / "h100"), "run.json")
    b = _trace(str(tmp_path / "mi300"), "run.json", scale=1.2, steps=5)
    d = qprof.diff(a, b, tokens_a=48, tokens_b=40, steps_a=6, steps_b=5, top=3)
    cli = cli_json(qprof_bin, tmp_path, "diff", [a, b], "--tokens-a", "48", "--tokens-b", "40",
                   "--steps-a", "6", "--steps-b", "5")
    assert d.to_dict() == cli
    assert cli["unit"] == "token"
    # Same file name in two folders: the sides are told apart by their folders.
    assert (cli["a"]["label"], cli["b"]["label"]) == ("h100", "mi300")
    assert "within" not in d.headline
    assert d.summary(wide=True) == run_cli(qprof_bin, "diff", a, b, "--tokens-a", "48", "--tokens-b", "40",
                                  "--steps-a", "6", "--steps-b", "5", "--top", "3").stdout


def test_diff_refuses_trace_options_for_an_analysed_profile(tmp_path):
    a = _trace(str(tmp_path), "a.json")
    p = qprof.analyze(a)
    with pytest.raises(ValueError, match="steps_b"):
        qprof.diff(a, p, steps_b=3)


def test_notebook_views_are_sized_to_their_content(tmp_path):
    small = qprof.analyze(_trace(str(tmp_path), "s.json", steps=1))
    height = int(re.search(r'style="width:100%;height:(\d+)px', small._repr_html_()).group(1))
    assert height != 900 and 160 <= height <= 4000
    d = qprof.diff(_trace(str(tmp_path / "a"), "r.json"), _trace(str(tmp_path / "b"), "r.json",
                                                                  scale=1.1))
    page = tmp_path / "d.html"
    d.to_html(page)
    # The inline view is the diff alone: never larger than the report file.
    assert len(d._repr_html_().encode()) <= page.stat().st_size


def test_directory_and_threads_errors_read_as_the_clis(tmp_path, qprof_bin):
    trace = _trace(str(tmp_path), "t.json")
    p = qprof.analyze(trace)
    with pytest.raises(ValueError) as e:
        p.to_html(tmp_path)
    r = run_cli(qprof_bin, "analyze", trace, "--html", str(tmp_path), check=False)
    assert r.returncode == 2
    assert str(e.value) == cli_error_line(r)
    with pytest.raises(ValueError) as e:
        qprof.analyze(trace, threads=100000)
    r = run_cli(qprof_bin, "analyze", trace, "--threads", "100000", check=False)
    assert r.returncode == 2 and str(e.value) == cli_error_line(r)
    with pytest.raises(ValueError) as e:
        qprof.analyze([trace, trace])
    assert "given twice" in str(e.value)
