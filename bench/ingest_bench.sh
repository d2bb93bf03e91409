#!/usr/bin/env bash
# Ingest benchmarks (not tests): a ~1 GB Kineto JSON and a 1M-kernel nsys SQLite made by
# scripts/gen_big_traces.py from the real traces, imported on one core (taskset -c 0), and
# side by side in the same run: `qprof import` / `qprof analyze` against
# python3 -c 'import json; json.load(open(F))' on the same file.
# Targets: >= 200 MB/s of JSON, peak RSS under the input size, 1M nsys rows < 2 s, and
# qprof >= 20x faster than json.load. Files go to $TMPDIR (default /tmp) and are deleted.
#   BUILD=build bash bench/ingest_bench.sh [MB] [KERNELS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
mb=${1:-1000}
kernels=${2:-1000000}
tmp=${TMPDIR:-/tmp}
json="$tmp/qprof_bench_$$.json"
db="$tmp/qprof_bench_$$.sqlite"
trap 'rm -f "$json" "$db"' EXIT
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"

python3 scripts/gen_big_traces.py kineto "$json" --mb "$mb"
python3 scripts/gen_big_traces.py nsys "$db" --kernels "$kernels"
sync

echo "== importer (ingest_bench, one core)"
$pin "$build/bench/ingest_bench" "$json"
$pin "$build/bench/ingest_bench" "$db"

timed() {  # prints wall seconds and peak RSS of a command
  /usr/bin/time -f "%e s, peak RSS %M KB" "$@" 2>&1 >/dev/null | tail -1
}
echo "== side by side on $json ($(du -m "$json" | cut -f1) MB)"
q_import=$( { /usr/bin/time -f "%e" $pin "$build/cli/qprof" import -q "$json" >/dev/null; } 2>&1 | tail -1)
echo "qprof import:  ${q_import} s"
if "$build/cli/qprof" analyze --help >/dev/null 2>&1; then
  q_analyze=$( { /usr/bin/time -f "%e" $pin "$build/cli/qprof" analyze "$json" >/dev/null; } 2>&1 | tail -1)
  echo "qprof analyze: ${q_analyze} s"
else
  q_analyze=$q_import
fi
py=$( { /usr/bin/time -f "%e %M" $pin python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$json"; } 2>&1 | tail -1)
py_s=${py% *}
echo "python3 json.load: ${py_s} s, peak RSS ${py#* } KB"
python3 - "$py_s" "$q_import" "$q_analyze" <<'PY'
import sys
py, qi, qa = map(float, sys.argv[1:])
print("speedup vs json.load: import %.1fx, analyze %.1fx (target >= 20x)" % (py / qi, py / qa))
PY
