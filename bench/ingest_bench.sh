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
# Wall and CPU (user+sys) seconds: CPU time is the fair figure on a shared machine.
measure() { { /usr/bin/time -f "%e %U %S %M" $pin "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1; }
q_import=$(measure "$build/cli/qprof" import -q "$json")
q_analyze=$(measure "$build/cli/qprof" analyze "$json")
py=$(measure python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$json")
python3 - "$q_import" "$q_analyze" "$py" <<'PY'
import sys
rows = [("qprof import", sys.argv[1]), ("qprof analyze", sys.argv[2]), ("python3 json.load", sys.argv[3])]
vals = {}
for name, v in rows:
    wall, user, sys_, rss = v.split()
    cpu = float(user) + float(sys_)
    vals[name] = (float(wall), cpu)
    print("%-18s wall %7.2f s  cpu %7.2f s  peak RSS %6.0f MB" % (name, float(wall), cpu, int(rss) / 1e3))
pw, pc = vals["python3 json.load"]
for name in ("qprof import", "qprof analyze"):
    w, c = vals[name]
    print("%s vs json.load: %.1fx wall, %.1fx cpu (target >= 20x)" % (name, pw / w, pc / c))
PY
