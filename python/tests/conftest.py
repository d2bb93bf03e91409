"""Shared fixtures: the qprof command of the same build, the shared real traces, and small
generated traces. Run through ctest (python_tests), which sets PYTHONPATH to the build
tree's package and QPROF_BIN to the qprof binary; or by hand:
  PYTHONPATH=build/python QPROF_BIN=build/cli/qprof python3 -m pytest python/tests
"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("QPROF_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)


def pytest_configure(config):
    config.addinivalue_line("markers", "ray: needs Ray (its own ctest entry, python_ray_test)")


def _testdata():
    env = os.environ.get("QPROF_TESTDATA")
    if env and os.path.isdir(env):
        return env
    p = os.path.normpath(os.path.join(SOURCE_DIR, "..", "shared", "testdata"))
    return p if os.path.isdir(p) else None


TESTDATA = _testdata()


def shared_traces():
    """Every real trace of the shared test data (empty when it is absent)."""
    if TESTDATA is None:
        return []
    return sorted(glob.glob(os.path.join(TESTDATA, "kineto", "*.json.gz")) +
                  glob.glob(os.path.join(TESTDATA, "nsys", "*.sqlite")))


@pytest.fixture(scope="session")
def testdata():
    if TESTDATA is None:
        pytest.skip("shared test data not found (../shared/testdata or $QPROF_TESTDATA)")
    return TESTDATA


@pytest.fixture(scope="session")
def qprof_bin():
    b = os.environ.get("QPROF_BIN") or shutil.which("qprof")
    if not b or not os.path.exists(b):
        pytest.skip("the qprof command is not known (set QPROF_BIN)")
    return b


def run_cli(qprof_bin, *args, check=True):
    r = subprocess.run([qprof_bin, *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"qprof {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def cli_error_line(r):
    """The message after 'qprof: error: ' on the CLI's stderr."""
    lines = [l for l in r.stderr.splitlines() if l.startswith("qprof: error: ")]
    assert lines, r.stderr
    return lines[-1][len("qprof: error: "):]


def cli_json(qprof_bin, tmp_path, command, inputs, *extra):
    out = os.path.join(str(tmp_path), f"{command}-cli.json")
    run_cli(qprof_bin, command, *inputs, "--json", out, *extra)
    with open(out, encoding="utf-8") as f:
        return json.load(f)
