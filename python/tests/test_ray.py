"""python -m qprof.ray_analyze on a local Ray instance of 2 cores: 16 rank traces read by
Ray tasks (2 files each) into partial profiles, merged on the driver, must give the Profile
of `qprof analyze` on all 16 files at once. Its own ctest entry (python_ray_test)."""
import json
import os
import subprocess
import sys

import pytest

import qprof
from conftest import cli_json
from tracegen import write_rank_set

pytestmark = pytest.mark.ray

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install .[ray])")


def test_ray_analyze_equals_analysing_all_files(tmp_path, qprof_bin):
    os.makedirs(tmp_path / "ranks")
    ranks = write_rank_set(str(tmp_path / "ranks"), ranks=16, steps=20)
    out = str(tmp_path / "ray.json")
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    r = subprocess.run(
        [sys.executable, "-m", "qprof.ray_analyze", *ranks, "--address", "local",
         "--num-cpus", "2", "--files-per-task", "2", "--json", out],
        capture_output=True, text=True, env=env, timeout=540)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "16 traces in 8 Ray tasks on 2 cores" in r.stderr, r.stderr[-2000:]
    with open(out, encoding="utf-8") as f:
        got = json.load(f)
    assert got == cli_json(qprof_bin, tmp_path, "analyze", ranks)
    assert got == qprof.analyze(ranks).to_dict()
    # Every rank is there, and the slow rank (tracegen: rank 5, 1.3x compute) stands out.
    assert len(got["ranks"]) == 16
    assert got["rank_summary"]["slowest_rank"] == 5
    assert got["rank_summary"]["imbalance"] == pytest.approx(1.3, abs=0.01)


def test_ray_analyze_reports_a_bad_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not a trace\n")
    r = subprocess.run(
        [sys.executable, "-m", "qprof.ray_analyze", str(bad), "--address", "local",
         "--num-cpus", "1"],
        capture_output=True, text=True, env=dict(os.environ, RAY_USAGE_STATS_ENABLED="0"),
        timeout=300)
    assert r.returncode == 2
    last = [l for l in r.stderr.splitlines() if l.startswith("qprof: error: ")]
    assert last and "not a trace qprof can read" in last[-1], r.stderr[-2000:]
