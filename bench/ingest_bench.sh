#!/usr/bin/env bash
# Ingest and analysis benchmark (not a test): makes its inputs with scripts/gen_big_traces.py
# from the real traces, then times `qprof analyze` on each, side by side in one run with an
# older qprof (BASE=path/to/qprof, optional) and, for Kineto JSON, Python's json.load on the
# same file. Prints one table of medians over REPEAT runs (wall, CPU = user + sys, peak RSS)
# and the issue's targets, met or missed by how much:
#   nsys 1M kernel rows  < 1.0 s wall, peak RSS < 1/3 of the file
#   nsys 10M kernel rows (~1 GB)  peak RSS < 1 GB
#   Kineto JSON  >= 50x json.load (wall), peak RSS < 1/4 of the file
#   nsys 1M kernel rows  <= 1.5x the sqlite3 CLI's kernel-name join
#   small real files (4k-kernel nsys export, 5 MB Kineto JSON)  < 50 ms each
# The machine is shared: the load average is printed, and CPU time (what this process used)
# next to wall time. Files go to $TMPDIR (default /tmp) and are deleted at the end.
#   BUILD=build BASE=/path/old/qprof REPEAT=3 bash bench/ingest_bench.sh [KINETO_MB] [KERNELS] [BIG_KERNELS]
# BIG_KERNELS=0 skips the 10M-row file (it takes a few minutes to make and ~1 GB of disk).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
base=${BASE:-}
repeat=${REPEAT:-3}
mb=${1:-250}
kernels=${2:-1000000}
big=${3:-10000000}
tmp=${TMPDIR:-/tmp}
dir=$(mktemp -d "$tmp/qprof_bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
qprof="$build/cli/qprof"
[ -x "$qprof" ] || { echo "ingest_bench.sh: no $qprof (build it first)"; exit 2; }

echo "== making inputs in $dir ($(df -h "$tmp" | awk 'NR==2 {print $4}') free)"
python3 scripts/gen_big_traces.py kineto "$dir/kineto.json" --mb "$mb"
python3 scripts/gen_big_traces.py nsys "$dir/nsys_1m.sqlite" --kernels "$kernels"
if [ "$big" != 0 ]; then
  python3 scripts/gen_big_traces.py nsys "$dir/nsys_big.sqlite" --kernels "$big"
fi
sync

results="$dir/results.txt"
: > "$results"
# run NAME FILE CMD...: REPEAT runs, one line per run: name file wall user sys rss_kb. Wall
# time from the clock in ns (time's %e is in 10 ms steps, too coarse for the small files).
run() {
  local name=$1 file=$2 t0 t1
  shift 2
  for _ in $(seq "$repeat"); do
    t0=$(date +%s%N)
    /usr/bin/time -o "$dir/time.txt" -f "%U %S %M" "$@" >/dev/null 2>&1 || {
      echo "ingest_bench.sh: $name on $file failed"; return 1; }
    t1=$(date +%s%N)
    echo "$name $file $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(tail -1 "$dir/time.txt")" >> "$results"
  done
}
# floor NAME FILE CMD...: as run, with the times the command prints itself ("in W s wall
# (C s CPU)"): ingest_bench --json-floor leaves loading the file out of them.
floor() {
  local name=$1 file=$2 out
  shift 2
  for _ in $(seq "$repeat"); do
    out=$("$@" 2>/dev/null) || { echo "ingest_bench.sh: $name on $file failed"; return 1; }
    echo "$name $file $(echo "$out" | sed -E 's/.* in ([0-9.]+) s wall .*\(([0-9.]+) s CPU\).*peak RSS ([0-9.]+) MB.*/\1 \2 0 \3/' | awk '{ printf "%s %s %s %d", $1, $2, $3, $4 * 1000 }')" >> "$results"
  done
}
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for f in nsys_1m.sqlite kineto.json; do
  run "qprof analyze" "$f" "$qprof" analyze "$dir/$f"
  [ -n "$base" ] && run "base qprof analyze" "$f" "$base" analyze "$dir/$f"
done
# The same analysis on one thread (bench/ingest_bench.cc, no process start-up or reports):
# where other work holds the second core, decoding on worker threads cannot gain.
run "analyze, 1 thread" kineto.json "$build/bench/ingest_bench" --analyze --threads 1 "$dir/kineto.json"
run "python3 json.load" kineto.json python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/kineto.json"
# The least a Kineto reader must do: simdjson On-Demand finding every event's "cat", one
# thread, the file already in memory. Half of it is the ideal on two cores.
floor "simdjson cat scan" kineto.json "$build/bench/ingest_bench" --json-floor "$dir/kineto.json"
# The nsys floors: the sqlite3 CLI joining every kernel row to its name (what any reader of
# the export must at least do), and reading the columns the analysis uses (the kernel table's
# 20 for times, names, launch configurations and the launch join; the runtime table's for the
# join and host-call sums), summed so nothing is printed.
join="SELECT s.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
cols="SELECT total(start + end + deviceId + streamId + correlationId + globalPid + ifnull(graphNodeId, 0) + demangledName + shortName + ifnull(mangledName, 0) + gridX + gridY + gridZ + blockX + blockY + blockZ + registersPerThread + staticSharedMemory + dynamicSharedMemory) FROM CUPTI_ACTIVITY_KIND_KERNEL; SELECT total(globalTid + correlationId + start + \"end\" + ifnull(nameId, 0)) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
if command -v sqlite3 >/dev/null; then
  run "sqlite3 name join" nsys_1m.sqlite sqlite3 "$dir/nsys_1m.sqlite" "$join"
  run "sqlite3 used columns" nsys_1m.sqlite sqlite3 "$dir/nsys_1m.sqlite" "$cols"
fi
# Small real inputs (the fixed cost a notebook loop or a shell feels): a 4k-kernel nsys
# export and the 5 MB h100_qwen Kineto JSON (decompressed here), with their floors.
testdata=${QPROF_TESTDATA:-../shared/testdata}
if [ -f "$testdata/nsys/h100x2_train_before.sqlite" ] && [ -f "$testdata/kineto/h100_qwen1.5-0.5b_inference.json.gz" ]; then
  cp "$testdata/nsys/h100x2_train_before.sqlite" "$dir/small.sqlite"
  gzip -dc "$testdata/kineto/h100_qwen1.5-0.5b_inference.json.gz" > "$dir/small.json"
  for f in small.sqlite small.json; do
    run "qprof analyze" "$f" "$qprof" analyze "$dir/$f"
    [ -n "$base" ] && run "base qprof analyze" "$f" "$base" analyze "$dir/$f"
  done
  command -v sqlite3 >/dev/null && run "sqlite3 name join" small.sqlite sqlite3 "$dir/small.sqlite" "$join"
  run "python3 json.load" small.json python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/small.json"
fi
if [ "$big" != 0 ]; then
  run "qprof analyze" nsys_big.sqlite "$qprof" analyze "$dir/nsys_big.sqlite"
  [ -n "$base" ] && [ "${BASE_BIG:-0}" = 1 ] && run "base qprof analyze" nsys_big.sqlite "$base" analyze "$dir/nsys_big.sqlite"
fi
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$results" "$dir" "$repeat" <<'PY'
import os, statistics, sys
results, d, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = {}
for line in open(results):
    parts = line.split()
    if len(parts) < 6:
        continue
    name, f = " ".join(parts[:-5]), parts[-5]
    wall, user, sys_, rss = map(float, parts[-4:])
    runs.setdefault((name, f), []).append((wall, user + sys_, rss / 1e3))
size = {f: os.path.getsize(os.path.join(d, f)) / 1e6 for f in os.listdir(d) if not f.endswith(".txt")}
med = {}
print("%-22s %-16s %9s %9s %9s %11s %8s" % ("tool", "input", "MB", "wall s", "CPU s", "peak RSS MB", "RSS/file"))
for (name, f), v in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    w = statistics.median(x[0] for x in v)
    c = statistics.median(x[1] for x in v)
    r = statistics.median(x[2] for x in v)
    med[(name, f)] = (w, c, r)
    print("%-22s %-16s %9.1f %9.3f %9.3f %11.1f %7.0f%%" % (name, f, size[f], w, c, r, 100 * r / size[f]))
print("(medians of %d runs each)" % repeat)
def target(ok, text):
    print("  [%s] %s" % ("met" if ok else "MISSED", text))
q = med.get(("qprof analyze", "nsys_1m.sqlite"))
if q:
    target(q[0] < 1.0, "nsys 1M rows: %.2f s wall (CPU %.2f s) vs < 1.0 s" % (q[0], q[1]))
    target(q[2] < size["nsys_1m.sqlite"] / 3, "nsys 1M rows: peak RSS %.1f MB vs < %.1f MB (1/3 of the file)" % (q[2], size["nsys_1m.sqlite"] / 3))
q = med.get(("qprof analyze", "nsys_big.sqlite"))
if q:
    target(q[2] < 1000, "nsys %.0f MB: peak RSS %.1f MB vs < 1000 MB" % (size["nsys_big.sqlite"], q[2]))
q, p = med.get(("qprof analyze", "kineto.json")), med.get(("python3 json.load", "kineto.json"))
one = med.get(("analyze, 1 thread", "kineto.json"))
if q and p:
    target(p[0] / q[0] >= 50, "Kineto: %.1fx json.load in wall time (%.1fx in CPU time) vs >= 50x" % (p[0] / q[0], p[1] / q[1]))
if one and p:
    print("  Kineto on one thread: %.1fx json.load in wall time, %.1fx in CPU time" % (p[0] / one[0], p[1] / one[1]))
fl = med.get(("simdjson cat scan", "kineto.json"))
if fl and p:
    print("  floor: a simdjson scan of every event's \"cat\" is %.1fx json.load on one thread, %.1fx on two cores at best (half its time)" % (p[0] / fl[0], 2 * p[0] / fl[0]))
    target(q[2] < size["kineto.json"] / 4, "Kineto: peak RSS %.1f MB vs < %.1f MB (1/4 of the file)" % (q[2], size["kineto.json"] / 4))
j = med.get(("sqlite3 name join", "nsys_1m.sqlite"))
q = med.get(("qprof analyze", "nsys_1m.sqlite"))
if j and q:
    target(q[0] <= 1.5 * j[0], "nsys 1M rows: %.2fx the sqlite3 name join (%.2f s) vs <= 1.5x" % (q[0] / j[0], j[0]))
u = med.get(("sqlite3 used columns", "nsys_1m.sqlite"))
if u and q:
    print("  floor: reading the columns the analysis uses takes the sqlite3 CLI %.2f s (%.2fx the name join); qprof is %.2fx that" % (u[0], u[0] / j[0] if j else 0, q[0] / u[0]))
for f in ("small.sqlite", "small.json"):
    q = med.get(("qprof analyze", f))
    if q:
        target(q[0] < 0.05, "%s (%.1f MB): %.3f s wall vs < 0.05 s" % (f, size[f], q[0]))
b = med.get(("base qprof analyze", "nsys_1m.sqlite"))
q = med.get(("qprof analyze", "nsys_1m.sqlite"))
if b and q:
    print("  nsys 1M rows against BASE: %.1fx less wall, %.1fx less CPU, %.1fx less peak RSS" % (b[0] / q[0], b[1] / q[1], b[2] / q[2]))
b, q = med.get(("base qprof analyze", "kineto.json")), med.get(("qprof analyze", "kineto.json"))
if b and q:
    print("  Kineto against BASE: %.1fx less wall, %.1fx less CPU, %.1fx less peak RSS" % (b[0] / q[0], b[1] / q[1], b[2] / q[2]))
PY
