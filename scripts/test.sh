#!/usr/bin/env bash
# The whole test suite, from a fresh clone on Debian 12: installs what is missing, builds
# everything (CUDA targets for sm_90a/100a/120a when nvcc is present), runs every test.
# GPU tests skip with a reason when no GPU is present; the run ends with how many tests were
# skipped and why (scripts/ctest_skips.py). With CI=true the CuTe cross-check fails instead
# of skipping when its headers are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
start=$(date +%s)

bash scripts/install-deps.sh

export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
jobs=$(nproc)
# QPROF_PYTHON=ON: the Python module and its pytest tests are part of the suite, so a
# missing nanobind stops here instead of leaving them out.
cmake --preset default -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache \
  -DQPROF_PYTHON=ON >/dev/null
cmake --build build -j"$jobs"
# Skipped tests (GTEST_SKIP, exit code 77) are reported, with their reasons, whether or not
# the run passed: a skipped check is not a passed one.
ctest_rc=0
ctest --test-dir build --output-on-failure -j"$jobs" || ctest_rc=$?
echo "test.sh: skipped tests:"
python3 scripts/ctest_skips.py build
if [ "$ctest_rc" -ne 0 ]; then exit "$ctest_rc"; fi

# Bounded libFuzzer runs of every importer (clang, ASan + UBSan, separate build dir).
FUZZ_SECONDS=${FUZZ_SECONDS:-45} CMAKE_CXX_COMPILER_LAUNCHER=ccache bash scripts/fuzz.sh

echo "test.sh: done in $(( $(date +%s) - start )) s"
