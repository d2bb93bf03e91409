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

# What the device run needs, as build targets and as paths in the build tree.
gpu_targets=(kernels_cuda_test cuda_backend_test cuda_tp_test formats_codecs_cuda_test
  profiler_cupti_gpu_test qprof_copy_bandwidth qprof_kernel_bench qprof_cupti_overhead
  qprof_cupti_trace_check qprof_inject qprof)
gpu_files=(tests/kernels_cuda/kernels_cuda_test tests/runtime_cuda/cuda_backend_test
  tests/runtime_cuda/cuda_tp_test tests/formats/cuda/formats_codecs_cuda_test
  tests/profiler_cupti/profiler_cupti_gpu_test bench/qprof_copy_bandwidth
  bench/qprof_kernel_bench bench/qprof_cupti_overhead bench/qprof_cupti_trace_check
  cli/libqprof_inject.so cli/qprof)

if [ "${1:-}" = "--prepare" ]; then
  bd=build-device
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$bd" -G Ninja -DQPROF_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real \
    -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$bd" -j"$(nproc)" --target "${gpu_targets[@]}"
  rm -rf "$bd/dist"
  # dist/ mirrors the build tree's layout (cli/qprof next to cli/libqprof_inject.so, tests/,
  # bench/), so device-check-cupti.sh can take it as its build folder.
  for f in "${gpu_files[@]}"; do mkdir -p "$bd/dist/$(dirname "$f")"; cp "$bd/$f" "$bd/dist/$f"; done
  mkdir -p "$bd/dist/lib"
  # Non-system shared libraries (everything but glibc, libstdc++/libgcc, the CUDA driver and
  # the CUDA toolkit's own libraries: the device image has the toolkit, and libnccl alone
  # would exceed the 64 MiB a device call can carry).
  for f in "${gpu_files[@]}"; do ldd "$bd/dist/$f" | awk '/=> \//{print $3}'; done | sort -u |
    grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux|libcuda)\.so' |
    grep -v -E '^/usr/local/cuda' |
    while read -r lib; do cp -L "$lib" "$bd/dist/lib/"; done
  for f in "${gpu_files[@]}"; do strip "$bd/dist/$f" 2>/dev/null || true; done
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

if [ -x build-device/dist/bench/qprof_kernel_bench ]; then
  bd=$root/build-device/dist
  export LD_LIBRARY_PATH=$bd/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "using prebuilt binaries in build-device/dist"
else
  bd=$root/build-device
  step build 240 bash -c "cmake -S . -B build-device -G Ninja -DQPROF_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90a-real >/dev/null && cmake --build build-device -j\$(nproc) \
      --target ${gpu_targets[*]}"
fi
bin=$bd/bench
qprof=$bd/cli/qprof

step gpu_tests 120 "$bd/tests/kernels_cuda/kernels_cuda_test" --gtest_brief=1
step gpu_backend_tests 90 "$bd/tests/runtime_cuda/cuda_backend_test" --gtest_brief=1
step gpu_codec_tests 20 "$bd/tests/formats/cuda/formats_codecs_cuda_test" --gtest_brief=1
copy_gbps=0
step copy_bandwidth 30 bash -o pipefail -c "'$bin/qprof_copy_bandwidth' 1024 | tee '$out/copy.txt'"
if [ -s "$out/copy.txt" ]; then copy_gbps=$(awk '/copy_bandwidth_gbps/{print $2}' "$out/copy.txt"); fi
echo "measured copy bandwidth: ${copy_gbps} GB/s"
step kernel_bench 150 bash -o pipefail -c "'$bin/qprof_kernel_bench' '$copy_gbps' 1,16,64 | tee '$out/bench.txt'"

for fmt in mxfp4 nvfp4; do
  step "run_small_$fmt" 40 "$qprof" run --backend cuda --model small --format "$fmt" \
    --batch 16 --steps 4 --out "$out/run-small-$fmt"
done
for b in 1 16 64; do
  for fmt in mxfp4 nvfp4; do
    step "run_v4flash_${fmt}_b$b" 45 "$qprof" run --backend cuda --model v4-flash \
      --layers 4 --format "$fmt" --batch "$b" --steps 2 --out "$out/run-v4-$fmt-b$b"
  done
done

# CUPTI collector checks (trace and metrics mode, qprof record on torch loops, overhead),
# within what is left of the budget; DEVICE_CHECK_CUPTI=0 leaves them out.
if [ "${DEVICE_CHECK_CUPTI:-1}" = 1 ]; then
  step cupti_checks 200 env QPROF_CHECK_OUT="$out/cupti" bash scripts/device-check-cupti.sh "$bd"
fi

echo
echo "== device-check done in $(elapsed)s; failed steps: ${failed[*]:-none}"
echo "== copy bandwidth (measured, D2D, read+write): ${copy_gbps} GB/s"
echo "== kernel table (bench/kernel_bench.cc; MB moved = distinct experts' weights or selected KV rows)"
if [ -s "$out/bench.txt" ]; then cat "$out/bench.txt"; else echo "(no bench results)"; fi
