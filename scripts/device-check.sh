#!/usr/bin/env bash
# The GPU check of the CUDA kernels and backend, for a lent H200 (sm_90a). Two modes:
#
#   scripts/device-check.sh --prepare   (on the development machine, no GPU needed)
#       Builds the GPU binaries for sm_90a only into build-device/ and collects them with
#       the shared libraries they need (Abseil, protobuf, ... from Debian) into
#       build-device/dist/{bin,lib}, so that the device machine, whose image has CUDA but
#       not this project's Debian packages, can run them. Carry build-device/dist.
#
#   scripts/device-check.sh             (on the device machine)
#       Uses build-device/dist when present, else tries to build there. Then, each step
#       with its own timeout, continuing past a failing step and reporting it:
#         1. GPU tests (label gpu): every kernel against its CPU oracle;
#         2. measured copy bandwidth (large D2D copy, bytes read + written);
#         3. kernel bench at V4-Flash shapes, batch 1, 16, 64 (MoE slot_gemv / w4a16_mma
#            per format, sparse MLA SIMT / tensor core);
#         4. `qprof run --backend cuda` on both formats: small, and v4-flash --layers 4 at
#            batch 1, 16, 64;
#       and prints last a table: kernel, path, format, batch, time per call, MB moved
#       (expert weight bytes of the distinct experts / selected KV bytes), GB/s, share of
#       the measured copy bandwidth. Full log under $OUT (or ./device-check-out).
#       Whole run capped at 8 minutes (steps are skipped when the budget is spent).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "${1:-}" = "--prepare" ]; then
  bd=build-device
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$bd" -G Ninja -DQPROF_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real \
    -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$bd" -j"$(nproc)" --target kernels_cuda_test qprof_copy_bandwidth qprof_kernel_bench qprof
  rm -rf "$bd/dist"
  mkdir -p "$bd/dist/bin" "$bd/dist/lib"
  cp "$bd/tests/kernels_cuda/kernels_cuda_test" "$bd/bench/qprof_copy_bandwidth" \
     "$bd/bench/qprof_kernel_bench" "$bd/cli/qprof" "$bd/dist/bin/"
  # Non-system shared libraries (everything but glibc, libstdc++/libgcc and the CUDA driver).
  for b in "$bd"/dist/bin/*; do ldd "$b" | awk '/=> \//{print $3}'; done | sort -u |
    grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$bd/dist/lib/"; done
  strip "$bd"/dist/bin/* 2>/dev/null || true
  du -sh "$bd/dist"
  echo "device-check: prepared $bd/dist (carry it with the device call)"
  exit 0
fi

out=${OUT:-$root/device-check-out}
mkdir -p "$out"
log=$out/device-check.log
exec > >(tee -a "$log") 2>&1
start=$(date +%s)
budget=${DEVICE_CHECK_BUDGET_S:-470}
failed=()
elapsed() { echo $(( $(date +%s) - start )); }
# step NAME TIMEOUT_S CMD...: runs with a timeout unless the budget is spent; never exits.
step() {
  local name=$1 limit=$2; shift 2
  local left=$(( budget - $(elapsed) ))
  if [ "$left" -le 5 ]; then echo "== $name: SKIPPED (budget spent)"; failed+=("$name(skipped)"); return 0; fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (timeout ${limit}s, t=$(elapsed)s)"
  local rc=0
  timeout --kill-after=5 "$limit" "$@" || rc=$?
  if [ "$rc" -ne 0 ]; then echo "== $name: FAILED rc=$rc"; failed+=("$name(rc=$rc)"); fi
  return 0
}

echo "device-check: $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv || true

if [ -x build-device/dist/bin/qprof_kernel_bench ]; then
  bin=$root/build-device/dist/bin
  export LD_LIBRARY_PATH=$root/build-device/dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "using prebuilt binaries in build-device/dist"
else
  bin=$root/build-device/bin-local
  mkdir -p "$bin"
  step build 240 bash -c "cmake -S . -B build-device -G Ninja -DQPROF_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90a-real >/dev/null && cmake --build build-device -j\$(nproc) \
      --target kernels_cuda_test qprof_copy_bandwidth qprof_kernel_bench qprof && \
      cp build-device/tests/kernels_cuda/kernels_cuda_test build-device/bench/qprof_copy_bandwidth \
         build-device/bench/qprof_kernel_bench build-device/cli/qprof $bin/"
fi

step gpu_tests 120 "$bin/kernels_cuda_test" --gtest_brief=1
copy_gbps=0
step copy_bandwidth 30 bash -o pipefail -c "'$bin/qprof_copy_bandwidth' 1024 | tee '$out/copy.txt'"
if [ -s "$out/copy.txt" ]; then copy_gbps=$(awk '/copy_bandwidth_gbps/{print $2}' "$out/copy.txt"); fi
echo "measured copy bandwidth: ${copy_gbps} GB/s"
step kernel_bench 150 bash -o pipefail -c "'$bin/qprof_kernel_bench' '$copy_gbps' 1,16,64 | tee '$out/bench.txt'"

for fmt in mxfp4 nvfp4; do
  step "run_small_$fmt" 40 "$bin/qprof" run --backend cuda --model small --format "$fmt" \
    --batch 16 --steps 4 --out "$out/run-small-$fmt"
done
for b in 1 16 64; do
  for fmt in mxfp4 nvfp4; do
    step "run_v4flash_${fmt}_b$b" 45 "$bin/qprof" run --backend cuda --model v4-flash \
      --layers 4 --format "$fmt" --batch "$b" --steps 2 --out "$out/run-v4-$fmt-b$b"
  done
done

echo
echo "== device-check done in $(elapsed)s; failed steps: ${failed[*]:-none}"
echo "== copy bandwidth (measured, D2D, read+write): ${copy_gbps} GB/s"
echo "== kernel table (bench/kernel_bench.cc; MB moved = distinct experts' weights or selected KV rows)"
if [ -s "$out/bench.txt" ]; then cat "$out/bench.txt"; else echo "(no bench results)"; fi
