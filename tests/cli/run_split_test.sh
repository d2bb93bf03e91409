#!/bin/sh
# `qprof run` with both formats separates the format from the MoE path (api/format_path_split.h):
# three configurations measured --split-repeats times on the CPU backend, printed as run /
# format alone / path alone with median and range, and written to split.json, where every
# ratio must follow from the tokens/s figures of the same repetition.
# Usage: run_split_test.sh QPROF_BINARY
set -u
qprof="$1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$qprof" run --backend cpu --model tiny --steps 2 --batch 2 --split-repeats 2 \
  --no-model-projection --out "$out/run" > "$out/stdout" 2> "$out/stderr" \
  || { cat "$out/stderr"; fail "qprof run exited non-zero"; }
grep -q "as run (mxfp4 on slot_gemv, nvfp4 on w4a16_mma)" "$out/stdout" \
  || { cat "$out/stdout"; fail "no 'as run' line"; }
grep -q "format alone (both on w4a16_mma)" "$out/stdout" || fail "no 'format alone' line"
grep -q "path alone (mxfp4: slot_gemv -> w4a16_mma)" "$out/stdout" || fail "no 'path alone' line"
grep -q "median \[min..max\] of 2 repetitions" "$out/stdout" || fail "no repetition count"
grep -q "split: mxfp4 on w4a16_mma, 2 repetitions" "$out/stderr" || fail "no progress line"
[ -s "$out/run/split.json" ] || fail "no split.json"
python3 - "$out/run/split.json" <<'PY' || fail "split.json is inconsistent"
import json, statistics, sys
s = json.load(open(sys.argv[1]))
t = s["tokens_per_s"]
a, b, c = t["mxfp4_on_mxfp4_path"], t["mxfp4_on_nvfp4_path"], t["nvfp4_on_nvfp4_path"]
assert s["repetitions"] == 2 and len(a) == len(b) == len(c) == 2, s
assert min(a + b + c) > 0, s
for name, num, den in (("as_run", c, a), ("format_alone", c, b), ("path_alone", b, a)):
    want = [n / d for n, d in zip(num, den)]
    got = s[name]["values"]
    assert all(abs(g - w) <= 1e-5 * w for g, w in zip(got, want)), (name, got, want)
    assert abs(s[name]["median"] - statistics.median(want)) <= 1e-5 * statistics.median(want)
for i in range(2):
    prod = s["format_alone"]["values"][i] * s["path_alone"]["values"][i]
    assert abs(prod - s["as_run"]["values"][i]) <= 1e-4 * prod
assert s["provenance"] == "measured" and s["where"] == "host CPU, measured", s
PY
# Off: no split runs, no split.json, and the one-run line says how to get the split.
"$qprof" run --backend cpu --model tiny --steps 1 --batch 2 --split-repeats 0 \
  --no-model-projection --out "$out/off" > "$out/stdout" 2> "$out/stderr" || fail "--split-repeats 0"
grep -q "split:" "$out/stderr" && fail "split ran with --split-repeats 0"
[ -e "$out/off/split.json" ] && fail "split.json written with --split-repeats 0"
grep -q "\-\-split-repeats N separates them" "$out/stdout" || { cat "$out/stdout"; fail "no hint"; }
echo "PASS"
