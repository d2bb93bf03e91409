#!/usr/bin/env bash
# Compiler launcher for the CUDA kernel libraries: runs the compile command unchanged,
# keeps its stderr (the `-Xptxas -v` resource report) in <log_dir>/<object>.ptxas.txt, and
# shows only the non-report lines on the console. ccache (if any) runs after this in the
# launcher chain and replays stderr on cache hits, so the report is complete either way.
# usage: ptxas_log.sh <log_dir> <command...>
set -u
log_dir=$1
shift
if [ -z "${1:-}" ]; then shift; fi  # an empty launcher slot
out=unknown.o
prev=
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out=$a; fi
  prev=$a
done
mkdir -p "$log_dir"
log="$log_dir/$(basename "$out").ptxas.txt"
"$@" 2>"$log.tmp"
rc=$?
grep -v -E '^ptxas info|^ +[0-9]+ bytes (stack|gmem)|^ +Function properties' "$log.tmp" >&2
mv -f "$log.tmp" "$log"
exit $rc
