"""The JSON qprof writes validates against the checked-in schemas, 64-bit figures as numbers."""
import glob
import json
import os

import pytest

import qprof
from conftest import SOURCE_DIR, cli_json, run_cli, shared_traces

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = os.path.join(SOURCE_DIR, "schemas")


def _schema(name):
    with open(os.path.join(SCHEMAS, f"{name}.schema.json"), encoding="utf-8") as f:
        s = json.load(f)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


def _errors(validator, doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in
            validator.iter_errors(doc)][:5]


def test_packaged_schemas_are_the_checked_in_ones():
    for name in ("profile", "diff", "run-summary"):
        with open(os.path.join(SCHEMAS, f"{name}.schema.json"), encoding="utf-8") as f:
            assert qprof.schema(name) == json.load(f)
    # The generator in the extension makes the checked-in Profile and Diff schemas.
    assert json.loads(qprof._qprof.schema("profile")) == qprof.schema("profile")
    assert json.loads(qprof._qprof.schema("diff")) == qprof.schema("diff")


@pytest.mark.parametrize("trace", shared_traces(), ids=os.path.basename)
def test_cli_profile_json_validates(trace, qprof_bin, tmp_path):
    doc = cli_json(qprof_bin, tmp_path, "analyze", [trace])
    assert _errors(_schema("profile"), doc) == []
    assert doc["schema_version"] == qprof.SCHEMA_VERSION
    # Numbers, not strings: what jq and pandas read natively.
    for key in ("kernel_time_ns", "busy_time_ns", "kernel_count", "span_ns"):
        assert type(doc["totals"][key]) is int, key
    assert all(type(k["time_ns"]) is int for k in doc["kernels"])


def test_diff_json_validates(testdata, qprof_bin, tmp_path):
    a = os.path.join(testdata, "kineto", "diff_control_a100.json.gz")
    b = os.path.join(testdata, "kineto", "diff_test_v100.json.gz")
    doc = cli_json(qprof_bin, tmp_path, "diff", [a, b])
    assert _errors(_schema("diff"), doc) == []
    assert doc["schema_version"] == qprof.SCHEMA_VERSION
    assert all(type(r["a_time_ns"]) is int for r in doc["roles"])


def test_checked_in_goldens_validate():
    golden = os.path.join(SOURCE_DIR, "tests", "analysis", "testdata", "golden")
    files = sorted(glob.glob(os.path.join(golden, "*.json")))
    assert files
    for f in files:
        with open(f, encoding="utf-8") as fh:
            doc = json.load(fh)
        kind = "diff" if f.endswith(".diff.json") else "profile"
        assert _errors(_schema(kind), doc) == [], f


def test_run_summary_validates(qprof_bin, tmp_path):
    story = os.path.join(SOURCE_DIR, "tests", "analysis", "model", "golden",
                         "story_rtx_pro_6000.json")
    with open(story, encoding="utf-8") as f:
        assert _errors(_schema("run-summary"), json.load(f)) == []
    out = tmp_path / "run"
    run_cli(qprof_bin, "run", "--backend", "model", "--target", "h200", "--model", "v4-flash",
            "--batch", "4", "--format", "both", "--out", str(out))
    summaries = glob.glob(str(out / "*summary.json"))
    assert summaries, os.listdir(out)
    for s in summaries:
        with open(s, encoding="utf-8") as f:
            doc = json.load(f)
        assert _errors(_schema("run-summary"), doc) == [], s
        assert doc["schema_version"] == 1
    # The profile and diff of the modelled run validate too.
    for f in glob.glob(str(out / "*.json")):
        if f.endswith("summary.json") or f.endswith("perfetto.json"):
            continue
        with open(f, encoding="utf-8") as fh:
            doc = json.load(fh)
        kind = "diff" if "headline" in doc else "profile"
        assert _errors(_schema(kind), doc) == [], f


def test_schema_rejects_quoted_integers():
    v = _schema("profile")
    doc = {"schema_version": 1}
    bad = dict(doc, totals={"kernel_time_ns": "1220926"})
    assert any("kernel_time_ns" in e for e in _errors(v, bad))
