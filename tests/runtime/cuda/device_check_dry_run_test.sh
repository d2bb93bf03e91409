#!/bin/sh
# The device check without a GPU (scripts/device-check.sh): pack the GPU binaries of this
# build with their libraries (--prepare --from-build), then --dry-run against that folder:
# every library resolves inside the carried folder with the ld.so cache off (what a bare
# device would see), every binary starts with only those libraries, $OUT stays within the
# 8-file limit. Then it must fail: with a carried library removed, the check names it.
# usage: device_check_dry_run_test.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # log file, then the script's arguments
  log=$1; shift
  bash "$src/scripts/device-check.sh" "$@" > "$log" 2>&1 || { cat "$log"; return 1; }
}
run "$tmp/prepare.log" --prepare --from-build "$build" --dist "$tmp/dist" --no-archive
mkdir "$tmp/out"
OUT="$tmp/out" DEVICE_CHECK_WORK="$tmp/work" run "$tmp/dry.log" --dry-run --dist "$tmp/dist"
for want in "library check: PASS" "binaries start: PASS" "files: within the limits" \
            "v4flash_nvfp4 .*cap" "sum of caps"; do
  grep -q "$want" "$tmp/dry.log" || { cat "$tmp/dry.log"; echo "missing: $want"; exit 1; }
done
[ "$(find "$tmp/out" -type f | wc -l)" -le 8 ] || { ls -R "$tmp/out"; exit 1; }
# A missing library must fail the check, naming it.
rm "$tmp/dist/lib/libprotobuf.so.32"
mkdir "$tmp/out2"
OUT="$tmp/out2" DEVICE_CHECK_WORK="$tmp/work2" bash "$src/scripts/device-check.sh" --dry-run \
  --dist "$tmp/dist" > "$tmp/dry2.log" 2>&1 || true
grep -q "library check: FAIL" "$tmp/dry2.log" || { cat "$tmp/dry2.log"; echo "missing library not caught"; exit 1; }
grep -q "libprotobuf.so.32 => .*not carried" "$tmp/dry2.log" || { cat "$tmp/dry2.log"; exit 1; }
echo "device-check dry run: PASS"
