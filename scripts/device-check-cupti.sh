#!/usr/bin/env bash
# CUPTI collector checks on a machine with an NVIDIA GPU. Called by scripts/device-check.sh
# (engineer "cuda"'s script) after the build, or alone:
#   scripts/device-check-cupti.sh [BUILD_DIR]        (default: build)
# Needs the targets qprof, qprof_inject, qprof_cupti_overhead, qprof_cupti_trace_check,
# profiler_cupti_gpu_test,
# and python3 with torch for the external-program part. Prints every figure it measures;
# exits non-zero when a check fails. Checks that cannot run (no counter permission, no
# torch) say SKIP with the reason instead of failing.
set -u
BUILD=${1:-build}
OUT=${QPROF_CHECK_OUT:-/tmp/qprof-cupti-check}
QPROF=$BUILD/cli/qprof
CHECK=$BUILD/bench/qprof_cupti_trace_check
HERE=$(cd "$(dirname "$0")" && pwd)
FAIL=0
rm -rf "$OUT" && mkdir -p "$OUT"
section() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*"; FAIL=1; }

section "device and counter permission"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi not available"
grep -i RmProfilingAdminOnly /proc/driver/nvidia/params 2>/dev/null ||
  echo "RmProfilingAdminOnly: unknown (no /proc/driver/nvidia/params)"
echo "uid $(id -u)"

section "collector GPU tests (kernels, NVTX paths, CUDA-graph kernels, metrics pass)"
timeout 120 "$BUILD/tests/profiler_cupti/profiler_cupti_gpu_test" || fail "profiler_cupti_gpu_test"

section "collector overhead (batch 16) and record loss (100k kernels)"
timeout 240 "$BUILD/bench/qprof_cupti_overhead" --batch 16 --steps 40 --kernels 100000 ||
  fail "qprof_cupti_overhead (targets: overhead <= 3%, 0 dropped)"

if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  section "qprof record (trace mode): torch bf16 matmul + elementwise loops"
  timeout 180 "$QPROF" record --out "$OUT/torch" -- python3 "$HERE/cupti_workloads/torch_loops.py" ||
    fail "qprof record (trace)"
  "$CHECK" "$OUT"/torch/qprof-*.qtrace | tee "$OUT/torch.txt" || true
  grep -q "bench/matmul" "$OUT/torch.txt" || fail "no kernel attributed to NVTX bench/matmul"
  grep -q "bench/elementwise" "$OUT/torch.txt" || fail "no kernel attributed to NVTX bench/elementwise"

  section "qprof record --metrics: tensor-pipe of the bf16 GEMM vs the elementwise kernel"
  timeout 300 "$QPROF" record --metrics --out "$OUT/torch-metrics" -- \
    python3 "$HERE/cupti_workloads/torch_loops.py" || fail "qprof record --metrics"
  "$CHECK" "$OUT"/torch-metrics/qprof-[0-9]*[0-9].qtrace > "$OUT/torch-metrics.txt" 2>&1
  if grep -q "metrics measured" "$OUT/torch-metrics.txt"; then
    "$CHECK" "$OUT"/torch-metrics/qprof-[0-9]*[0-9].qtrace \
      --expect-tensor 'nvjet|gemm|xmma|cutlass|sm90=40' \
      --expect-simt 'elementwise=1' || fail "tensor-pipe expectations"
  else
    cat "$OUT/torch-metrics.txt"
    echo "SKIP: metrics not measured here (reason above: counter permission?)"
  fi
else
  section "qprof record: SKIP (python3 with CUDA torch not available)"
fi

section "qprof run --backend cuda, both formats, trace and metrics mode"
if "$QPROF" run --help 2>&1 | grep -q "cuda"; then
  METRICS_FLAG=""
  "$QPROF" run --help 2>&1 | grep -q -- "--metrics" && METRICS_FLAG="--metrics"
  for fmt in mxfp4 nvfp4; do
    for mode in trace metrics; do
      [ "$mode" = metrics ] && [ -z "$METRICS_FLAG" ] && { echo "SKIP: qprof run has no --metrics"; continue; }
      dir="$OUT/run-$fmt-$mode"
      extra=""; [ "$mode" = metrics ] && extra="$METRICS_FLAG"
      timeout 240 "$QPROF" run --backend cuda --model tiny --format "$fmt" --batch 16 --steps 4 \
        $extra --out "$dir" || { fail "qprof run --backend cuda --format $fmt ($mode)"; continue; }
      "$CHECK" "$dir"/*.qtrace || true
    done
  done
else
  echo "SKIP: this qprof run has no CUDA backend yet"
fi

section "result"
if [ "$FAIL" = 0 ]; then echo "device-check-cupti: PASS"; else echo "device-check-cupti: FAIL"; fi
exit "$FAIL"
