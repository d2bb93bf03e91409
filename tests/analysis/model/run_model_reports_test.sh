#!/bin/sh
# `qprof run --backend model` writes the same files as a measured run (per format JSON, HTML,
# Perfetto; the diff) and they say "modelled". Usage: run_model_reports_test.sh QPROF_BINARY
set -eu
qprof="$1"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$qprof" run --backend model --target rtx-pro-6000 --model tiny --format both --out "$out" \
  > "$out/stdout.txt" 2> "$out/stderr.txt" || { cat "$out/stderr.txt"; exit 1; }
for f in mxfp4.qtrace nvfp4.qtrace mxfp4.json mxfp4.html mxfp4.perfetto.json \
         nvfp4.json nvfp4.html nvfp4.perfetto.json diff.json diff.html; do
  [ -s "$out/$f" ] || { echo "FAIL: $f missing or empty"; ls -l "$out"; exit 1; }
done
# Both sides of the diff are modelled; nothing in it claims a measurement or the registry.
n=$(grep -o '"provenance": *"modelled[^"]*"' "$out/diff.json" | wc -l)
[ "$n" -ge 2 ] || { echo "FAIL: diff.json lacks modelled provenance for A and B"; \
                    grep -o '"provenance": *"[^"]*"' "$out/diff.json"; exit 1; }
if grep -q '"provenance": *"measured' "$out/diff.json"; then
  echo "FAIL: diff.json says measured"; exit 1
fi
for f in mxfp4.json nvfp4.json; do
  if grep -q '"evidence": *"\(registry\|measured\)"' "$out/$f"; then
    echo "FAIL: $f labels a modelled kernel registry or measured"; exit 1
  fi
  grep -q '"evidence": *"modelled"' "$out/$f" || { echo "FAIL: $f has no modelled evidence"; exit 1; }
done
grep -qi "modelled" "$out/diff.html" || { echo "FAIL: diff.html does not say modelled"; exit 1; }
echo "ok: $(ls "$out" | tr '\n' ' ')"
