#!/bin/sh
# `qprof run` takes its kernel choices from the registry: an unknown --moe-backend or
# --mla-kernel fails with one line naming the registry's choices and a non-zero exit, on
# any machine (validated before any device is looked for), and --help lists the same
# choices. Usage: run_choices_test.sh QPROF_BINARY
set -u
qprof="$1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for backend in cuda cpu auto; do
  "$qprof" run --backend "$backend" --moe-backend nonsense --model tiny --out "$out/x" \
    > "$out/stdout" 2> "$out/stderr" && fail "--backend $backend --moe-backend nonsense exited 0"
  grep -q "unknown MoE backend 'nonsense' (choices: auto, slot_gemv, w4a16_mma, fp4_mma)" \
    "$out/stderr" || { cat "$out/stderr"; fail "no registry choices for --backend $backend"; }
  grep -q "no CUDA device" "$out/stderr" && fail "device looked for before the option was checked"
done
"$qprof" run --backend cuda --mla-kernel flash --model tiny --out "$out/x" 2> "$out/stderr" \
  && fail "--mla-kernel flash exited 0"
grep -q "unknown MLA kernel 'flash' (choices: auto, simt, mma)" "$out/stderr" \
  || { cat "$out/stderr"; fail "no registry choices for --mla-kernel"; }
# --backend model takes a list; every item is checked the same way.
"$qprof" run --backend model --moe-backend slot_gemv,bogus --model tiny --out "$out/x" \
  2> "$out/stderr" && fail "a list with an unknown path exited 0"
grep -q "unknown MoE backend 'bogus'" "$out/stderr" || { cat "$out/stderr"; fail "list item"; }
"$qprof" run --help > "$out/help" 2>&1
grep -q "MoE kernel path: auto, slot_gemv, w4a16_mma, fp4_mma" "$out/help" \
  || fail "--help does not list the registry's MoE paths"
grep -q "Sparse-MLA variant: auto, simt, mma" "$out/help" \
  || fail "--help does not list the registry's MLA variants"
echo "ok: $(head -1 "$out/stderr")"
