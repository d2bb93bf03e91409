"""qprof.analyze / diff / read_trace give the CLI's figures, as tables and as JSON."""
import json
import os
import pickle
import subprocess
import sys
import threading
import time

import pytest

import qprof
from conftest import cli_json, run_cli, shared_traces

pd = pytest.importorskip("pandas")

TRACES = shared_traces()


@pytest.mark.parametrize("trace", TRACES, ids=os.path.basename)
def test_profile_equals_cli_json(trace, qprof_bin, tmp_path):
    p = qprof.analyze(trace)
    assert p.to_dict() == cli_json(qprof_bin, tmp_path, "analyze", [trace])
    # The kernels table sums to the CLI's total kernel time and launch count.
    k = p.kernels
    totals = p.totals
    assert isinstance(totals["kernel_time_ns"], int)
    assert int(k["time_ns"].sum()) == totals["kernel_time_ns"]
    assert int(k["calls"].sum()) == totals["kernel_count"]


def test_several_traces_analysed_together(testdata, qprof_bin, tmp_path):
    a = os.path.join(testdata, "kineto", "diff_control_a100.json.gz")
    b = os.path.join(testdata, "kineto", "diff_test_v100.json.gz")
    assert qprof.analyze([a, b]).to_dict() == cli_json(qprof_bin, tmp_path, "analyze", [a, b])


def test_options_reach_the_analysis(testdata, qprof_bin, tmp_path):
    trace = os.path.join(testdata, "kineto", "h100_qwen1.5-0.5b_inference.json.gz")
    model = os.path.join(os.environ.get("QPROF_SOURCE_DIR", ""), "tests", "analysis",
                         "testdata", "qwen1.5-0.5b.model.json")
    if not os.path.exists(model):
        pytest.skip("model config of the source tree not found")
    p = qprof.analyze(trace, device="h200", model_shape=model, label="qwen")
    assert p.label == "qwen"
    assert p.to_dict() == cli_json(qprof_bin, tmp_path, "analyze", [trace], "--device", "h200",
                                   "--model", model, "--label", "qwen")
    assert p.ceilings.get("formats"), "a model config gives format ceilings"


def test_dataframe_columns_and_dtypes(testdata):
    p = qprof.analyze(os.path.join(testdata, "kineto", "a100_alexnet.json.gz"))
    k = p.kernels
    assert isinstance(k, pd.DataFrame) and len(k) > 0
    for col in ("name", "calls", "time_ns", "share", "class", "role", "evidence", "median_ns"):
        assert col in k.columns, col
    assert k["time_ns"].dtype == "int64"
    assert k["calls"].dtype == "int64"
    assert k["share"].dtype == "float64"
    assert pd.api.types.is_string_dtype(k["name"])
    assert abs(k["share"].sum() - 1.0) < 1e-9
    r = p.roles
    assert r["time_ns"].dtype == "int64"
    assert int(r["time_ns"].sum()) == p.totals["kernel_time_ns"]
    c = p.classes
    assert set(c["class"]) <= {"tensor", "simt", "comm", "memory", "other"}
    # Maps are flattened: a role's time per class.
    assert any(col.startswith("class_time_ns.") for col in r.columns)
    # A table the profile has no rows for still has its columns.
    assert list(p.ranks.columns) == [] or "rank" in p.ranks.columns


def test_tables_without_pandas_are_lists_of_dicts(testdata):
    trace = os.path.join(testdata, "kineto", "a100_triton_example.json.gz")
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "import qprof\n"
        f"p = qprof.analyze({trace!r})\n"
        "k = p.kernels\n"
        "assert isinstance(k, list) and k and isinstance(k[0], dict), type(k)\n"
        "assert sum(r['time_ns'] for r in k) == p.totals['kernel_time_ns']\n"
        "assert isinstance(qprof.read_trace(" + repr(trace) + ").kernels, list)\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_diff_equals_cli_json(testdata, qprof_bin, tmp_path):
    a = os.path.join(testdata, "kineto", "diff_control_a100.json.gz")
    b = os.path.join(testdata, "kineto", "diff_test_v100.json.gz")
    d = qprof.diff(a, b)
    assert d.to_dict() == cli_json(qprof_bin, tmp_path, "diff", [a, b])
    assert d.headline
    assert len(d.roles) > 0 and "a_time_ns" in d.roles.columns
    # Profiles in, the same diff out.
    pa, pb = qprof.analyze(a, label="a"), qprof.analyze(b, label="b")
    assert qprof.diff(pa, pb).to_dict() == cli_json(
        qprof_bin, tmp_path, "diff", [a, b], "--label-a", "a", "--label-b", "b")


def test_diff_reads_profile_json(testdata, qprof_bin, tmp_path):
    a = os.path.join(testdata, "nsys", "h100x2_train_before.sqlite")
    b = os.path.join(testdata, "nsys", "h100x2_train_after.sqlite")
    ja = str(tmp_path / "before.json")
    qprof.analyze(a).to_json(ja)
    assert qprof.diff(ja, b).to_dict() == cli_json(qprof_bin, tmp_path, "diff", [ja, b])


def test_html_report_and_notebook_display(testdata, qprof_bin, tmp_path):
    trace = os.path.join(testdata, "kineto", "a100_triton_example.json.gz")
    p = qprof.analyze(trace)
    page = p.to_html()
    assert page.lstrip().lower().startswith("<!doctype html")
    out = tmp_path / "module.html"
    p.to_html(out)
    cli = tmp_path / "cli.html"
    run_cli(qprof_bin, "analyze", trace, "--html", str(cli))
    assert out.read_text() == cli.read_text() == page
    cell = p._repr_html_()
    assert cell.startswith("<iframe srcdoc='") and page.lower()[:15] in cell.lower()
    # The page is an attribute value: the notebook sees one iframe element and no script
    # of its own (the page runs inside the frame only).
    from html.parser import HTMLParser

    class Tags(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.srcdoc = [], None

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self.srcdoc = dict(attrs).get("srcdoc", self.srcdoc)

    t = Tags()
    t.feed(cell)
    assert t.tags == ["iframe"] and t.srcdoc == page
    d = qprof.diff(trace, trace)
    assert d._repr_html_().startswith("<iframe srcdoc=")


def test_read_trace_tables(testdata):
    trace = os.path.join(testdata, "kineto", "a100_alexnet.json.gz")
    t = qprof.read_trace(trace)
    k = t.kernels
    assert len(k) == qprof.analyze(trace).totals["kernel_count"]
    assert (k["end_ns"] - k["start_ns"] == k["duration_ns"]).all()
    assert t.header["source_kind"] == "kineto-json"
    assert len(t) >= len(k)
    assert "KERNEL" in repr(set(t.activities["kind"]))


def test_pickle_round_trip(testdata):
    a = os.path.join(testdata, "kineto", "diff_control_a100.json.gz")
    p = qprof.analyze(a)
    assert pickle.loads(pickle.dumps(p)).to_dict() == p.to_dict()
    d = qprof.diff(p, p)
    assert pickle.loads(pickle.dumps(d)).to_dict() == d.to_dict()


def test_analysis_releases_the_gil(testdata):
    # While a thread analyses the largest shared trace, this thread keeps running Python.
    # Were the GIL held for the whole C++ call, the loop below could not advance meanwhile.
    trace = max(shared_traces(), key=os.path.getsize)
    done = threading.Event()
    result = {}

    def work():
        t0 = time.perf_counter()
        result["p"] = qprof.analyze(trace)
        result["s"] = time.perf_counter() - t0
        done.set()

    th = threading.Thread(target=work)
    spins = 0
    th.start()
    while not done.is_set():
        spins += 1
    th.join()
    assert result["p"].totals["kernel_count"] > 0
    # At least one loop turn per 10 us of analysis: a blocked thread makes none.
    assert spins > result["s"] * 1e5 * 0.1, (spins, result["s"])


def test_stubs_cover_the_extension():
    import ast

    stub = os.path.join(os.path.dirname(qprof.__file__), "_qprof.pyi")
    tree = ast.parse(open(stub, encoding="utf-8").read())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    public = {n for n in dir(qprof._qprof) if not n.startswith("_")} | {"__version__"}
    assert public - declared == set()


def test_collectives_and_copies_tables(testdata):
    """The a100x2 all-reduce trace: one row per collective and per copy kind, the figures of
    the JSON, with NCCL's bus bandwidth and the link."""
    p = qprof.analyze(os.path.join(testdata, "kineto", "a100x2_nccl_allreduce.json.gz"))
    c = p.collectives
    assert isinstance(c, pd.DataFrame)
    assert set(c["name"]) == {"all_reduce", "broadcast"}
    ar = c[c["name"] == "all_reduce"].iloc[0]
    assert ar["calls"] == 15 and ar["bytes"] == 306684384
    assert ar["busbw_gbps"] == pytest.approx(ar["bytes"] / ar["time_with_bytes_ns"])  # n = 2
    assert ar["link"].startswith("NVLink")
    copies = p.copies
    assert set(zip(copies["kind"], copies["memory"])) == {("DtoD", "device -> device"),
                                                          ("memset", "device")}
    assert int(copies["bytes"].sum()) == sum(r["bytes"] for r in p.to_dict()["copies"])
    per_dev = p.comm_per_device
    assert int(per_dev["exposed_ns"].sum()) == p.comm["exposed_ns"]
    causes = p.idle_causes
    assert int(causes["time_ns"].sum()) == p.to_dict()["idle"]["idle_ns"]
    assert set(p.host_sync["kind"]) == {"event_synchronize", "device_synchronize"}
