#!/bin/sh
# The commands that use no GPU start without loading any CUDA library: the binary does not
# depend on libcudart, libcupti or libcuda (ldd), and analyze, diff, merge, import and
# devices load none of them as they run (the dynamic loader's own log, LD_DEBUG=libs).
# Usage: no_gpu_libs_test.sh QPROF_BINARY
set -u
qprof="$1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cuda='libcudart\|libcupti\|libcuda\.so\|libnvidia'

ldd "$qprof" > "$out/ldd.txt" 2>&1 || fail "ldd $qprof"
if grep -q "$cuda" "$out/ldd.txt"; then
  fail "qprof depends on a CUDA library: $(grep "$cuda" "$out/ldd.txt" | tr '\n' ' ')"
fi

# A tiny Kineto trace: two kernels launched under a user annotation.
cat > "$out/t.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "step 0", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 20, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 40, "dur": 5, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7, "ts": 60, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 2}}
]}
JSON
check() {  # check NAME ARGS...: runs qprof ARGS with the loader's log, no CUDA library in it
  name=$1
  shift
  LD_DEBUG=libs LD_DEBUG_OUTPUT="$out/ld.$name" "$qprof" "$@" > "$out/stdout" 2> "$out/stderr" \
    || fail "$name: exit $? ($(cat "$out/stderr"))"
  ls "$out"/ld."$name".* > /dev/null 2>&1 || fail "$name: no loader log (LD_DEBUG unsupported?)"
  grep -q "calling init" "$out"/ld."$name".* || fail "$name: the loader log is empty"
  if grep -q "$cuda" "$out"/ld."$name".*; then
    fail "$name loads a CUDA library: $(grep -h "$cuda" "$out"/ld."$name".* | head -3)"
  fi
}
check analyze analyze "$out/t.json" --json "$out/p.json"
check diff diff "$out/t.json" "$out/t.json"
check partial analyze "$out/t.json" --partial "$out/t.qprofile"
check merge merge "$out/t.qprofile"
check import import -q "$out/t.json" --qtrace "$out/t.qtrace"
check devices devices
echo "ok: analyze, diff, merge, import and devices load no CUDA library"
