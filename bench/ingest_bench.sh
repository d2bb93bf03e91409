#!/usr/bin/env bash
# Ingest and analysis benchmark (not a test): makes its inputs with scripts/gen_big_traces.py
# from the real traces, then times `qprof analyze` on each beside the floors of reading that
# input at all, and prints one table: per input, qprof's row, then each floor with qprof's
# ratio to it and the target, met or missed by how much. Medians over REPEAT runs of wall
# time, CPU time (user + sys) and peak RSS.
#
# Floors (what any reader of the input must at least do):
#   cat FILE > /dev/null        every input (reading the file; the page cache is warm)
#   zcat FILE > /dev/null       .gz inputs (reading and inflating it)
#   simdjson DOM parse          Kineto JSON: the whole document parsed on one thread, the
#                               file already in memory (bench/ingest_bench --json-dom)
#   sqlite3 kernel-launch join  nsys exports: the sqlite3 CLI joining every kernel row to its
#                               name and to the runtime call that launched it
# Targets:
#   Kineto JSON                 <= 2x cat (plain)       <= 1.0x zcat (gzip)
#   nsys 1M kernel rows         <= 1.25x the sqlite3 kernel-launch join
#   every generated input       peak RSS < 1/4 of the file (of the inflated JSON for .gz)
#   small real files            < 50 ms wall (the 4k-kernel h100x2 nsys export, the 5 MB
#                               h100_qwen Kineto JSON): the fixed cost a notebook loop feels
# The machine may be shared: the load average is printed before and after, and CPU time
# next to wall time. Files go to $TMPDIR (default /tmp) and are deleted at the end.
#   BUILD=build BASE=/path/old/qprof REPEAT=3 bash bench/ingest_bench.sh [KINETO_MB] [KERNELS] [BIG_KERNELS]
# BIG_KERNELS=0 skips the 10M-row file (it takes a few minutes to make and ~1 GB of disk).
# While developing, modest sizes: REPEAT=3 bash bench/ingest_bench.sh 100 300000 0
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
[ -x "$build/bench/ingest_bench" ] || { echo "ingest_bench.sh: no $build/bench/ingest_bench (build it first)"; exit 2; }

echo "== making inputs in $dir ($(df -h "$tmp" | awk 'NR==2 {print $4}') free)"
python3 scripts/gen_big_traces.py kineto "$dir/kineto.json" --mb "$mb"
gzip -c "$dir/kineto.json" > "$dir/kineto.json.gz"
python3 scripts/gen_big_traces.py nsys "$dir/nsys_1m.sqlite" --kernels "$kernels"
if [ "$big" != 0 ]; then
  python3 scripts/gen_big_traces.py nsys "$dir/nsys_big.sqlite" --kernels "$big"
fi
# Small real inputs: a 4k-kernel nsys export and the 5 MB h100_qwen Kineto JSON (inflated).
testdata=${QPROF_TESTDATA:-../shared/testdata}
small=()
if [ -f "$testdata/nsys/h100x2_train_before.sqlite" ] && [ -f "$testdata/kineto/h100_qwen1.5-0.5b_inference.json.gz" ]; then
  cp "$testdata/nsys/h100x2_train_before.sqlite" "$dir/small.sqlite"
  gzip -dc "$testdata/kineto/h100_qwen1.5-0.5b_inference.json.gz" > "$dir/small.json"
  small=(small.sqlite small.json)
else
  echo "== no shared test data at $testdata: the small-file rows are left out"
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
    echo "$name|$file|$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(tail -1 "$dir/time.txt")" >> "$results"
  done
}
# floor_parse NAME FILE CMD...: as run, with the times the command prints itself ("in W s
# wall (C s CPU)"): ingest_bench's JSON floors leave loading the file out of them.
floor_parse() {
  local name=$1 file=$2 out
  shift 2
  for _ in $(seq "$repeat"); do
    out=$("$@" 2>/dev/null) || { echo "ingest_bench.sh: $name on $file failed"; return 1; }
    echo "$name|$file|$(echo "$out" | sed -E 's/.* in ([0-9.]+) s wall .*\(([0-9.]+) s CPU\).*peak RSS ([0-9.]+) MB.*/\1 \2 0 \3/' | awk '{ printf "%s %s %s %d", $1, $2, $3, $4 * 1000 }')" >> "$results"
  done
}
launch_join="SELECT s.value, k.start, k.end, r.globalTid, r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId"

echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
inputs=(kineto.json kineto.json.gz nsys_1m.sqlite "${small[@]}")
[ "$big" != 0 ] && inputs+=(nsys_big.sqlite)
for f in "${inputs[@]}"; do
  run "qprof analyze" "$f" "$qprof" analyze "$dir/$f"
  if [ -n "$base" ] && { [ "$f" != nsys_big.sqlite ] || [ "${BASE_BIG:-0}" = 1 ]; }; then
    run "BASE qprof analyze" "$f" "$base" analyze "$dir/$f"
  fi
  run "cat > /dev/null" "$f" cat "$dir/$f"
  case "$f" in
    *.gz) run "zcat > /dev/null" "$f" zcat "$dir/$f" ;;
    *.json) floor_parse "simdjson DOM parse" "$f" "$build/bench/ingest_bench" --json-dom "$dir/$f" ;;
    *.sqlite) command -v sqlite3 >/dev/null && run "sqlite3 kernel-launch join" "$f" sqlite3 "$dir/$f" "$launch_join" ;;
  esac
done
# The Kineto analysis on one thread (no process start-up or reports): what decoding on
# worker threads gains where the second core is free.
run "analyze, 1 thread" kineto.json "$build/bench/ingest_bench" --analyze --threads 1 "$dir/kineto.json"
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$results" "$dir" "$repeat" <<'PY'
import os, statistics, sys
results, d, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
runs = {}
for line in open(results):
    name, f, rest = line.rstrip("\n").split("|")
    wall, user, sys_, rss = map(float, rest.split())
    runs.setdefault((name, f), []).append((wall, user + sys_, rss / 1e3))
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in runs.items()}
size = {f: os.path.getsize(os.path.join(d, f)) / 1e6 for f in os.listdir(d) if not f.endswith(".txt")}
inflated = {"kineto.json.gz": size.get("kineto.json", 0)}

def verdict(value, limit, unit="x"):
    """met/missed by how much: value against an upper limit."""
    if value <= limit:
        return "met (%.0f%% under)" % (100 * (1 - value / limit)) if limit else "met"
    return "MISSED by %.0f%%" % (100 * (value / limit - 1))

# Ratio targets of qprof's wall time to a floor, per input.
targets = {("kineto.json", "cat > /dev/null"): 2.0,
           ("kineto.json.gz", "zcat > /dev/null"): 1.0,
           ("nsys_1m.sqlite", "sqlite3 kernel-launch join"): 1.25}
floors = ["cat > /dev/null", "zcat > /dev/null", "simdjson DOM parse", "sqlite3 kernel-launch join"]
order = ["kineto.json", "kineto.json.gz", "nsys_1m.sqlite", "small.sqlite", "small.json", "nsys_big.sqlite"]
print("%-16s %7s  %-27s %8s %7s %8s  %7s  %-9s %s" % (
    "input", "MB", "tool", "wall s", "CPU s", "RSS MB", "qprof/", "target", "verdict"))
missed = 0
for f in [f for f in order if ("qprof analyze", f) in med]:
    q = med[("qprof analyze", f)]
    # qprof's own row: the RSS target, and the wall target of the small files.
    checks = []
    if f.startswith("small."):  # a process's own few MB outweigh a quarter of these
        checks.append(("wall < 50 ms", q[0], 0.05, "%.0f ms" % (1e3 * q[0])))
    else:
        rss_of = inflated.get(f, size[f])
        checks.append(("RSS < %.1f MB" % (rss_of / 4), q[2], rss_of / 4, "%.1f MB" % q[2]))
    v = "; ".join("%s %s: %s" % (name, shown, verdict(value, limit, ""))
                  for name, value, limit, shown in checks)
    missed += sum(value > limit for _, value, limit, _ in checks)
    print("%-16s %7.1f  %-27s %8.3f %7.3f %8.1f  %7s  %-9s %s" % (
        f, size[f], "qprof analyze", q[0], q[1], q[2], "", "", v))
    b = med.get(("BASE qprof analyze", f))
    if b:
        print("%-16s %7s  %-27s %8.3f %7.3f %8.1f  %6.2fx  %-9s %s" % (
            "", "", "BASE qprof analyze", b[0], b[1], b[2], q[0] / b[0], "", "(older build)"))
    for fl in floors:
        m = med.get((fl, f))
        if not m:
            continue
        ratio = q[0] / m[0] if m[0] > 0 else float("inf")
        limit = targets.get((f, fl))
        text = verdict(ratio, limit) if limit else "(floor)"
        missed += bool(limit) and ratio > limit
        print("%-16s %7s  %-27s %8.3f %7.3f %8.1f  %6.2fx  %-9s %s" % (
            "", "", fl, m[0], m[1], m[2], ratio, "<= %gx" % limit if limit else "", text))
one = med.get(("analyze, 1 thread", "kineto.json"))
q = med.get(("qprof analyze", "kineto.json"))
if one and q:
    print("Kineto JSON on one thread (ingest_bench --analyze --threads 1): %.3f s wall, %.3f s "
          "CPU; qprof analyze is %.2fx that" % (one[0], one[1], q[0] / one[0]))
print("(medians of %d runs each; wall = the clock around the process, CPU = user + sys; "
      "%d target%s missed)" % (repeat, missed, "" if missed == 1 else "s"))
PY
