#!/usr/bin/env bash
# The main job, from a fresh clone on Debian 12: installs what is missing, builds qprof,
# and runs `qprof run` (both formats, CUDA backend when a GPU is present, otherwise the
# CPU backend), writing traces and reports into qprof-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/install-deps.sh --build
export CCACHE_BASEDIR="$root"
cmake --preset default -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build -j"$(nproc)" --target qprof
./build/cli/qprof run --out qprof-out "$@"
