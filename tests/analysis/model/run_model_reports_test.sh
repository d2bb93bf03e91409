#!/bin/sh
# `qprof run --backend model` writes the same files as a measured run (per format JSON, HTML,
# Perfetto; the diff) and they say "modelled"; the story's published figures are cited by
# where they come from. Usage: run_model_reports_test.sh QPROF_BINARY
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
# The story's shape (v4-flash, TP 8, batch 16) is put beside the published figures: the JSON
# and HTML cite where each is from, never a file of the project's own notes.
story="$out/story"
"$qprof" run --backend model --target rtx-pro-6000 --model v4-flash --tp 8 --batch 16 \
  --context 4096 --steps 1 --format mxfp4 --out "$story" \
  > "$out/stdout.txt" 2> "$out/stderr.txt" || { cat "$out/stderr.txt"; exit 1; }
for f in mxfp4.json mxfp4.html; do
  grep -q "reported in the user story (SGLang, 8x RTX PRO 6000)" "$story/$f" \
    || { echo "FAIL: $f does not say where the published figures are from"; exit 1; }
  if grep -q "FACTS\.md\|DESIGN\.md\|STYLE\.md\|SOURCES\.md" "$story/$f"; then
    echo "FAIL: $f cites a file users do not have"; grep -o ".\{60\}\(FACTS\|DESIGN\)\.md" "$story/$f"
    exit 1
  fi
done
echo "ok: $(ls "$out" | tr '\n' ' ')"
