#!/usr/bin/env bash
# Installs what qprof needs to build and test on Debian 12, only where it is missing.
# Safe to run repeatedly. Needs root (or sudo) for apt-get.
#   scripts/install-deps.sh          build + test dependencies
#   scripts/install-deps.sh --build  build dependencies only (the main job)
set -euo pipefail

want_tests=1
[[ "${1:-}" == "--build" ]] && want_tests=0

build_pkgs=(cmake ninja-build g++ pkg-config ccache libabsl-dev libprotobuf-dev protobuf-compiler
  libfmt-dev libgtest-dev libgmock-dev libsimdjson-dev libsqlite3-dev libcli11-dev zlib1g-dev
  python3)
# Tests: headless browser for the HTML reports, clang + libFuzzer for the importer fuzzers,
# python3 + pip for the ml_dtypes oracle, the cuobjdump/nvdisasm wheels and the Python
# module's build and tests (python3-dev: its headers), sqlite3 CLI.
test_pkgs=(chromium clang libclang-rt-14-dev python3-pip python3-dev sqlite3 fonts-dejavu-core)

pkgs=("${build_pkgs[@]}")
(( want_tests )) && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
if (( ${#missing[@]} )); then
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if (( want_tests )); then
  # Python packages for tests: ml_dtypes is the independent FP4/FP8 oracle; the NVIDIA
  # cuobjdump/nvdisasm wheels give SASS inspection without a full toolkit install;
  # nvidia-cutlass ships the CuTe headers (see below).
  py_missing=()
  python3 -c "import ml_dtypes, numpy" 2>/dev/null || py_missing+=(ml_dtypes numpy)
  # nvidia-cutlass: CuTe's headers, for the host-side cross-check of the PTX warp model's
  # fragment tables against CuTe's MMA_Traits (tests/kernels/warp_emu/cute_crosscheck_test.cc).
  python3 -c "import cutlass_library" 2>/dev/null || py_missing+=(nvidia-cutlass)
  # The Python module (python/, built by CMake when nanobind is found) and its tests:
  # nanobind and scikit-build-core build it (pip install . uses them too), pytest runs the
  # tests, pandas gives the DataFrames, jsonschema validates the JSON against schemas/,
  # ray runs the distributed analysis test (about 80 MB wheel, 285 MB installed).
  for m in nanobind scikit_build_core pandas pytest jsonschema ray; do
    python3 -c "import $m" 2>/dev/null || py_missing+=("${m//_/-}")
  done
  if ! command -v cuobjdump >/dev/null && ! ls "$(python3 -c 'import site;print(site.getsitepackages()[0])')"/nvidia/cu*/bin/cuobjdump >/dev/null 2>&1; then
    py_missing+=(nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)
  fi
  if (( ${#py_missing[@]} )); then
    echo "install-deps: pip installing ${py_missing[*]}" >&2
    python3 -m pip install -q --disable-pip-version-check "${py_missing[@]}" 2>&1 | grep -v -i "warning" >&2 || true
  fi
fi

if [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
  echo "install-deps: note: CUDA Toolkit 13 not found at /usr/local/cuda; CUDA targets will be" \
       "skipped (QPROF_CUDA=AUTO). Install it from NVIDIA's Debian repository to build them." >&2
fi
