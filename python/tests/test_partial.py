"""qprof.analyze_partial / merge / merge_partials: partial profiles as `qprof analyze
--partial` and `qprof merge` make them, and the same Profile as analysing all files at once."""
import os

import pytest

import qprof
from conftest import cli_json, run_cli, shared_traces
from tracegen import write_rank_set


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    return write_rank_set(str(tmp_path_factory.mktemp("ranks")), ranks=6, steps=8)


def test_partial_bytes_are_a_partial_profile_file(ranks):
    b = qprof.analyze_partial(ranks[:2])
    assert isinstance(b, bytes) and b.startswith(b"QPROFPP1")


def test_merge_of_groups_equals_analysing_all_at_once(ranks):
    whole = qprof.analyze(ranks).to_dict()
    parts = [qprof.analyze_partial(ranks[i:i + 2], threads=1) for i in range(0, len(ranks), 2)]
    assert qprof.merge(parts).to_dict() == whole
    # One file per partial, and a reduction in stages, give the same Profile.
    singles = [qprof.analyze_partial(r) for r in ranks]
    assert qprof.merge(singles).to_dict() == whole
    staged = [qprof.merge_partials(singles[:3]), qprof.merge_partials(singles[3:])]
    assert qprof.merge(staged).to_dict() == whole
    assert len(qprof.merge(parts).ranks) == len(ranks)


def test_merge_options_reach_the_analysis(ranks):
    p = qprof.merge([qprof.analyze_partial(ranks)], device="h200", label="tp6")
    assert p.label == "tp6"
    assert p.to_dict() == qprof.analyze(ranks, device="h200", label="tp6").to_dict()


@pytest.mark.parametrize("trace", shared_traces()[:2], ids=os.path.basename)
def test_real_trace_partial_equals_cli(trace, qprof_bin, tmp_path):
    # The CLI's partial file and the module's bytes finish to the CLI's analysis.
    cli_partial = str(tmp_path / "cli.qprofile")
    run_cli(qprof_bin, "analyze", trace, "--partial", cli_partial)
    whole = cli_json(qprof_bin, tmp_path, "analyze", [trace])
    assert qprof.merge(cli_partial).to_dict() == whole
    py_partial = tmp_path / "py.qprofile"
    py_partial.write_bytes(qprof.analyze_partial(trace))
    assert cli_json(qprof_bin, tmp_path, "merge", [str(py_partial)]) == whole


def test_cli_merges_module_partials(ranks, qprof_bin, tmp_path):
    files = []
    for i, r in enumerate(ranks):
        f = tmp_path / f"r{i}.qprofile"
        f.write_bytes(qprof.analyze_partial(r))
        files.append(str(f))
    assert cli_json(qprof_bin, tmp_path, "merge", files) == qprof.merge(files).to_dict()
    assert cli_json(qprof_bin, tmp_path, "merge", files) == \
        cli_json(qprof_bin, tmp_path, "analyze", ranks)


def test_bad_partials_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="no partial profiles"):
        qprof.merge([])
    with pytest.raises(ValueError, match="partial 0: not a partial profile"):
        qprof.merge([b"not a partial"])
    with pytest.raises(ValueError, match="does not parse"):
        qprof.merge([b"QPROFPP1\xff\xff\xff"])
    junk = tmp_path / "junk.qprofile"
    junk.write_bytes(b"junk")
    with pytest.raises(ValueError, match="junk.qprofile: not a partial profile"):
        qprof.merge_partials([str(junk)])
    with pytest.raises(FileNotFoundError):
        qprof.merge(str(tmp_path / "missing.qprofile"))
    with pytest.raises(ValueError, match="no traces"):
        qprof.analyze_partial([])
