#!/bin/sh
# `qprof diff --max-regression` end to end on the shared before/after nsys pair (comm per
# call grew; tests/api/diff_gate_test.cc checks the figure against the raw tables): a 10%
# limit fails with exit 3 and one line naming comm, after writing the reports asked for;
# comm=50% passes with exit 0; a bad limit, or a role neither side has (a misspelt role would
# gate nothing), is one error line and exit 2, with no report written.
# Usage: diff_gate_test.sh QPROF_BINARY TESTDATA_DIR   (exit 77 = skipped: no test data)
set -u
qprof="$1"
data="$2"
before="$data/nsys/h100x2_train_before.sqlite"
after="$data/nsys/h100x2_train_after.sqlite"
[ -f "$before" ] && [ -f "$after" ] || { echo "skipped: no $before"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out/stderr" 2>/dev/null; exit 1; }

"$qprof" diff "$before" "$after" --max-regression 10% --json "$out/d.json" \
  > "$out/stdout" 2> "$out/stderr"
code=$?
[ "$code" = 3 ] || fail "10%: exit $code, not 3"
last=$(tail -n 1 "$out/stderr")
case "$last" in
  "qprof: regression: comm: time per call "*"exceeds its 10% limit"*) ;;
  *) fail "10%: last line is '$last'" ;;
esac
[ "$(grep -c 'regression' "$out/stderr")" = 1 ] || fail "10%: more than one regression line"
grep -q '"failed": true' "$out/d.json" || fail "10%: the JSON was not written with the verdict"
grep -q '"worst": "comm"' "$out/d.json" || fail "10%: the JSON's verdict does not name comm"
grep -q "Regression gate (time per call): FAILED, worst comm" "$out/stdout" || fail "10%: no verdict table"

"$qprof" diff "$before" "$after" --max-regression comm=50% > "$out/stdout" 2> "$out/stderr"
code=$?
[ "$code" = 0 ] || fail "comm=50%: exit $code, not 0"
grep -q "qprof: no regression past the limits" "$out/stderr" || fail "comm=50%: no verdict line"

"$qprof" diff "$before" "$after" --max-regression ten > "$out/stdout" 2> "$out/stderr"
code=$?
[ "$code" = 2 ] || fail "bad limit: exit $code, not 2"
[ "$(wc -l < "$out/stderr")" = 1 ] || fail "bad limit: not one line"
grep -q "^qprof: error: --max-regression: 'ten' is not a percentage" "$out/stderr" \
  || fail "bad limit: wrong message"
"$qprof" diff "$before" "$after" --max-regression foo=5% --json "$out/foo.json" \
  > "$out/stdout" 2> "$out/stderr"
code=$?
[ "$code" = 2 ] || fail "foo=5%: exit $code, not 2"
[ "$(wc -l < "$out/stderr")" = 1 ] || fail "foo=5%: not one line"
grep -q "^qprof: error: --max-regression: no role 'foo' in either profile (roles: .*comm" \
  "$out/stderr" || fail "foo=5%: wrong message"
[ ! -e "$out/foo.json" ] || fail "foo=5%: a report was written"
echo "diff gate ok"
