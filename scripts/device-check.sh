#!/usr/bin/env bash
# The GPU check of the CUDA kernels and backend for a lent H200 (sm_90a), in three modes:
#
#   scripts/device-check.sh --prepare [--from-build DIR] [--dist DIR] [--no-archive]
#       On the development machine (no GPU needed). Builds the GPU binaries for sm_90a into
#       build-device/ (or takes them from an existing build, --from-build), with an RPATH
#       of $ORIGIN/../lib so they need no LD_LIBRARY_PATH, and collects them with every
#       shared library they load that a bare machine with the NVIDIA driver lacks (Abseil,
#       protobuf, fmt, simdjson, SQLite, zlib from Debian; libcudart and libcupti, plus
#       libnvperf_host/target that CUPTI opens for counters) into DIR (default
#       build-device/dist), and packs it as build-device/carry/dist.tar.gz: the one path to
#       carry. NCCL is not carried (200+ MB): qprof opens it with dlopen only for --tp > 1,
#       and the device's own (torch's nvidia-nccl-cu13) is found then.
#
#   OUT=/some/empty/dir scripts/device-check.sh --dry-run [--dist DIR]
#       Here, without a GPU: every step up to the first GPU call. Unpacks the carried
#       archive, checks exec bits and libraries against the carried folder alone (the
#       dynamic loader with no ld.so cache and only DIR/lib: what a bare device would see;
#       anything resolved elsewhere or not found fails, except the driver's libcuda), starts
#       every binary in a mode that touches no GPU, prints what each GPU step would run with
#       its time budget, then packs $OUT and shows the archive layout (at most 8 files).
#
#   scripts/device-check.sh [--dist DIR]
#       On the device machine. Same preflight (real ldd there: stop on "not found"), then
#       cheap checks first, every step with its own timeout inside a total budget
#       (DEVICE_CHECK_BUDGET_S, default 375 s: with the machine start a first run and a rerun
#       fit in one 15-minute lease; the caps of the steps before the CUPTI checks sum to 360 s,
#       so each of them runs even if every earlier one hits its cap):
#       tiny run with --check, GPU tests, copy bandwidth, kernel bench, small eager vs CUDA
#       graph (tokens must be identical), v4-flash --layers 4 at batch 1,16,64 (weights built
#       and uploaded once per format), CUPTI checks. A failing step is reported and the next
#       one runs; a step the budget cannot fit is skipped and listed. The last lines printed
#       are the summary table. DEVICE_CHECK_STEPS=a,b,... runs only those steps (a rerun).
#
# Results: $OUT holds device-check.log (everything), summary.txt (the table), bench.txt,
# env.txt (GPU, clocks before/after, libraries), and results.tar.gz (run folders, test XML,
# CUPTI outputs). The tool brings back at most 8 files of 16 MiB, two folders deep.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

mode=device
dist=$root/build-device/dist
from_build=""
archive=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare) mode=prepare ;;
    --dry-run) mode=dry-run ;;
    --dist) dist=$(realpath -m "$2"); shift ;;
    --from-build) from_build=$(realpath -m "$2"); shift ;;
    --no-archive) archive=0 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "device-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
carry_tar=$root/build-device/carry/dist.tar.gz

# What the device run executes, as build targets and as paths in the build tree.
gpu_targets=(qprof qprof_inject kernels_cuda_test cuda_backend_test cuda_tp_test
  cuda_step_kernels_test formats_codecs_cuda_test profiler_cupti_gpu_test cuda_graph_metrics_test
  qprof_copy_bandwidth qprof_kernel_bench qprof_cupti_overhead qprof_cupti_trace_check)
gpu_files=(cli/qprof cli/libqprof_inject.so tests/kernels/cuda/kernels_cuda_test
  tests/runtime/cuda/cuda_backend_test tests/runtime/cuda/cuda_tp_test
  tests/runtime/cuda/cuda_step_kernels_test tests/kernels/formats/cuda/formats_codecs_cuda_test
  tests/profiler/cupti/profiler_cupti_gpu_test tests/runtime/cuda/cuda_graph_metrics_test
  bench/qprof_copy_bandwidth bench/qprof_kernel_bench bench/qprof_cupti_overhead
  bench/qprof_cupti_trace_check)
# Loaded at run time with dlopen by libcupti (counters); carried beside it.
dlopen_extras=(libnvperf_host.so libnvperf_target.so)
# Libraries any Linux machine with the NVIDIA driver has: never carried.
base_libs='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libutil\.so\.1|libgcc_s\.so\.1|libstdc\+\+\.so\.6|libcuda\.so\.1)$'
ldso=$(ls /lib64/ld-linux-x86-64.so.2 2>/dev/null || echo /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)

# ---------------------------------------------------------------------------------------
# --prepare
if [ "$mode" = prepare ]; then
  set -e
  bd=$root/build-device
  if [ -z "$from_build" ]; then
    launcher=()
    if command -v ccache >/dev/null; then
      export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
      launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    fi
    # DT_RPATH (not RUNPATH: it also covers the libraries' own dependencies and libcupti's
    # dlopen) to the carried lib folder, at every depth a binary sits in dist/.
    rpath='-Wl,--disable-new-dtags,-rpath,\$ORIGIN/../lib:\$ORIGIN/../../lib:\$ORIGIN/../../../lib'
    cmake -S . -B "$bd" -G Ninja -DQPROF_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_SKIP_BUILD_RPATH=ON \
      "-DCMAKE_EXE_LINKER_FLAGS=$rpath" "-DCMAKE_SHARED_LINKER_FLAGS=$rpath" \
      "${launcher[@]}" >/dev/null
    cmake --build "$bd" -j"${JOBS:-2}" --target "${gpu_targets[@]}"
    from_build=$bd
  fi
  rm -rf "$dist"
  mkdir -p "$dist/lib"
  # dist/ mirrors the build tree's layout (cli/qprof next to cli/libqprof_inject.so, tests/,
  # bench/), so device-check-cupti.sh can take it as its build folder.
  for f in "${gpu_files[@]}"; do
    [ -f "$from_build/$f" ] || { echo "device-check: $from_build/$f is missing (build it first)" >&2; exit 1; }
    mkdir -p "$dist/$(dirname "$f")"
    cp "$from_build/$f" "$dist/$f"
    strip --strip-unneeded "$dist/$f" 2>/dev/null || true
  done
  # Every library the binaries resolve here, except the base ones, with its SONAME.
  missing=0
  for f in "${gpu_files[@]}"; do
    "$ldso" --list "$dist/$f" | awk '{print $1, $3}'
  done | sort -u | while read -r soname path; do
    [[ "$soname" =~ $base_libs ]] && continue
    [[ "$soname" == /* ]] && continue  # the interpreter line
    if [ "$path" = "not" ] || [ ! -f "$path" ]; then
      echo "device-check: $soname is not found on this machine" >&2; exit 1
    fi
    cp -L "$path" "$dist/lib/$soname"
  done
  cupti_dir=$(dirname "$(readlink -f "$dist/lib/libcupti.so.13" 2>/dev/null || echo /usr/local/cuda/lib/x)")
  for x in "${dlopen_extras[@]}"; do
    src=$(ldconfig -p | awk -v n="$x" '$1 == n {print $NF; exit}')
    [ -n "$src" ] || src=/usr/local/cuda/lib/$x
    if [ -f "$src" ]; then cp -L "$src" "$dist/lib/$x"; else echo "device-check: note: $x not found (CUPTI counters may be unavailable)"; fi
  done
  chmod -R u+rwX,go+rX "$dist"
  {
    echo "built from: ${from_build} ($(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo ', uncommitted changes'))"
    cuobjdump=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump \
      "$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)"/nvidia/cu13/bin/cuobjdump 2>/dev/null | head -1 || true)
    echo "GPU code in cli/qprof: $("$cuobjdump" --list-elf "$dist/cli/qprof" 2>/dev/null | grep -o 'sm_[0-9]*a*' | sort -u | tr '\n' ' ')"
    echo "highest symbol versions needed: $(for f in "${gpu_files[@]}" lib/*; do objdump -T "$dist/$f" 2>/dev/null; done | grep -oE 'GLIBC_[0-9.]+|GLIBCXX_[0-9.]+' | sort -V -u | awk -F_ '{v[$1]=$0} END {print v["GLIBC"], v["GLIBCXX"]}')"
    (cd "$dist" && find . -type f | sort | xargs sha256sum)
  } > "$dist/MANIFEST.txt"
  echo "device-check: dist $(du -sh "$dist" | cut -f1) in $dist ($(find "$dist" -type f | wc -l) files)"
  if [ "$archive" = 1 ]; then
    mkdir -p "$(dirname "$carry_tar")"
    tar -C "$(dirname "$dist")" -czf "$carry_tar.tmp" "$(basename "$dist")"
    mv "$carry_tar.tmp" "$carry_tar"
    echo "device-check: carry $(du -h "$carry_tar" | cut -f1): ${carry_tar#$root/} (limit 64 MiB with the working tree)"
    echo "device-check: run tool: command 'bash scripts/device-check.sh', carry [\"build-device/carry\"], timeout_s 420"
  fi
  exit 0
fi

# ---------------------------------------------------------------------------------------
# --dry-run and the device run
out=${OUT:-$root/device-check-out}
mkdir -p "$out"
if [ "$mode" = dry-run ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  echo "device-check: --dry-run wants an empty OUT folder ($out)" >&2; exit 2
fi
work=${DEVICE_CHECK_WORK:-/tmp/qprof-device-check}
rm -rf "$work" && mkdir -p "$work"/{runs,tests,cupti}
log=$out/device-check.log
env_txt=$out/env.txt
summary=$work/summary.txt
exec > >(tee -a "$log") 2>&1
tee_pid=$!
start=$(date +%s)
budget=${DEVICE_CHECK_BUDGET_S:-375}
pack_reserve=10
results=()   # "name|status|seconds|cap"
elapsed() { echo $(( $(date +%s) - start )); }
wanted() {  # DEVICE_CHECK_STEPS selects steps for a rerun
  [ -z "${DEVICE_CHECK_STEPS:-}" ] && return 0
  [[ ",${DEVICE_CHECK_STEPS}," == *",$1,"* ]]
}

# step NAME CAP_S MIN_S CMD...: runs CMD with timeout min(CAP, what the budget has left),
# unless fewer than MIN_S seconds are left (then SKIPPED). Never exits; prints as it goes.
step() {
  local name=$1 cap=$2 min=$3; shift 3
  wanted "$name" || return 0
  if [ "$mode" = dry-run ]; then
    printf '== %-22s [dry run] cap %3ss: %s\n' "$name" "$cap" "$*"
    results+=("$name|dry-run|0|$cap")
    return 0
  fi
  local left=$(( budget - pack_reserve - $(elapsed) ))
  if [ "$left" -lt "$min" ]; then
    echo "== $name: SKIPPED (budget: ${left}s left, needs ${min}s)"
    results+=("$name|SKIPPED|0|$cap"); return 0
  fi
  local limit=$cap; [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (timeout ${limit}s, t=$(elapsed)s)"
  local t0 rc=0
  t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" || rc=$?
  local took=$(( $(date +%s) - t0 )) status=ok
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then status="TIMEOUT"; elif [ "$rc" != 0 ]; then status="FAILED rc=$rc"; fi
  echo "== $name: $status in ${took}s"
  results+=("$name|$status|$took|$cap")
  return 0
}

clocks() {  # SM/memory clocks: the H200 idles at 345 MHz; read, never set
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu,pstate,clocks_throttle_reasons.active \
    --format=csv,noheader 2>/dev/null | sed "s/^/clocks $1: /" | tee -a "$env_txt"
}

echo "device-check ($mode): $(date -u +%FT%TZ) on $(hostname), budget ${budget}s"

# 0. The carried binaries.
if [ -f "$carry_tar" ] && [ ! -x "$dist/cli/qprof" ]; then
  mkdir -p "$(dirname "$dist")"
  tar -C "$(dirname "$dist")" -xzf "$carry_tar" && echo "unpacked ${carry_tar#$root/}"
fi
bd=$dist
if [ ! -d "$bd/cli" ]; then
  if [ "$mode" = dry-run ]; then echo "device-check: no carried binaries in $bd (run --prepare)" >&2; exit 3; fi
  echo "device-check: no carried binaries: building here (slow)"
  bd=$root/build-device
  cmake -S . -B "$bd" -G Ninja -DQPROF_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real >/dev/null &&
    cmake --build "$bd" -j"$(nproc)" --target "${gpu_targets[@]}" || { echo "device-check: STOP: build failed"; exit 3; }
fi
qprof=$bd/cli/qprof
# --prepare's binaries find dist/lib through their $ORIGIN RPATH; others need the path.
if [ -f "$qprof" ] && ! grep -qa 'ORIGIN/../lib' "$qprof"; then
  export LD_LIBRARY_PATH=$bd/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  echo "binaries without an \$ORIGIN rpath: LD_LIBRARY_PATH=$bd/lib"
fi

# 1. Preflight: exec bits, libraries, the GPU. Stops early with one clear line.
{
  echo "== environment"; uname -srm; ldd --version 2>&1 | head -1
  [ -f "$bd/MANIFEST.txt" ] && head -3 "$bd/MANIFEST.txt"
  command -v nvcc >/dev/null && nvcc --version | tail -1
} | tee -a "$env_txt"
stop=0
for f in "${gpu_files[@]}"; do
  if [ ! -f "$bd/$f" ]; then echo "missing: $f"; stop=1; continue; fi
  if [ ! -x "$bd/$f" ] && [[ "$f" != *.so ]]; then
    echo "not executable (fixed with chmod +x): $f"; chmod +x "$bd/$f"
  fi
done
echo "== library check ($([ "$mode" = dry-run ] && echo "simulated device: no ld.so cache, only $bd/lib" || echo "ldd on this machine"))" | tee -a "$env_txt"
: > "$work/libcheck.txt"
carried=$(realpath "$bd/lib")
for f in "${gpu_files[@]}"; do
  [ -f "$bd/$f" ] || continue
  if [ "$mode" = dry-run ]; then
    listing=$("$ldso" --inhibit-cache --library-path "$bd/lib" --list "$bd/$f" 2>&1)
  else
    listing=$(ldd "$bd/$f" 2>&1)  # the binaries find dist/lib through their RPATH
  fi
  # Fails: anything not found (but the driver's libcuda.so.1 on a machine without a
  # driver, i.e. here), a symbol version not found, and in a dry run anything resolved
  # outside the carried folder that is not a base library (absent on a bare device).
  bad=$(echo "$listing" | awk -v base="$base_libs" -v dry="$mode" '
    /version .* not found/ { print "VERSION " $0; next }
    /=>/ { name=$1; path=$3
           if (name == "libcuda.so.1" && dry == "dry-run") next
           if (path == "not") { print "MISSING " name; next }
           if (name ~ base) next
           print "PATH " name " " path }' |
    while read -r kind a b; do
      case "$kind" in
        VERSION) echo "$a $b" ;;
        MISSING) echo "$a => not found" ;;
        PATH) if [ "$mode" = dry-run ] && [ "$(dirname "$(realpath "$b")")" != "$carried" ]; then
                echo "$a => $b (not carried)"
              fi ;;
      esac
    done)
  if [ -n "$bad" ]; then { echo "  $f:"; echo "$bad" | sed 's/^/    /'; } >> "$work/libcheck.txt"; fi
done
cat "$work/libcheck.txt" | tee -a "$env_txt"
if [ -s "$work/libcheck.txt" ]; then
  echo "library check: FAIL: a library is missing or resolves outside the carried folder (above)" | tee -a "$env_txt"
  [ "$mode" = dry-run ] || { echo "device-check: STOP"; exit 3; }
  stop=1
else
  echo "library check: PASS ($(ls "$bd/lib" | wc -l) carried libraries; libcuda.so.1 is the device driver's)" | tee -a "$env_txt"
fi
# Every binary starts (a mode that touches no GPU), with the carried libraries only.
startfail=0
for f in "${gpu_files[@]}"; do
  [ -f "$bd/$f" ] && [[ "$f" != *.so ]] || continue
  case "$f" in
    cli/qprof) args=(version) ;;
    tests/*) args=(--gtest_list_tests) ;;
    bench/qprof_kernel_bench) args=() ;;   # usage, exit 2, no CUDA call
    *) continue ;;                          # these call CUDA first: ldd only
  esac
  if [ "$mode" = dry-run ]; then
    "$ldso" --inhibit-cache --library-path "$bd/lib" "$bd/$f" "${args[@]}" >/dev/null 2>"$work/start.err"
  else
    "$bd/$f" "${args[@]}" >/dev/null 2>"$work/start.err"
  fi
  rc=$?
  if [ "$rc" -gt 2 ] || grep -q "error while loading" "$work/start.err"; then
    echo "  does not start: $f (rc $rc): $(head -1 "$work/start.err")"; startfail=1
  fi
done
if [ "$startfail" = 0 ]; then echo "binaries start: PASS"; else echo "binaries start: FAIL (above)"; stop=1; fi
if [ "$mode" = device ]; then
  if ! nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader | tee -a "$env_txt"; then
    echo "device-check: STOP: nvidia-smi sees no GPU"; exit 3
  fi
  [ "$stop" = 0 ] || { echo "device-check: STOP: fix the preflight failures above first"; exit 3; }
  clocks before
  # Where the device keeps CUPTI's and NCCL's own libraries (for the record).
  find /usr/local /opt -maxdepth 9 \( -name 'libnccl.so.2' -o -name 'libnvperf_host.so' \) 2>/dev/null | head -6 | sed 's/^/found: /' | tee -a "$env_txt"
else
  echo "== nvidia-smi / clocks: [dry run] the first GPU call; not made here"
fi

# 2. Cheap checks first. Caps (seconds) sum to 360 up to the v4-flash runs; the CUPTI
# checks get what the earlier steps left.
run_args=(run --backend cuda)
step smoke_tiny_check 20 10 bash -o pipefail -c "'$qprof' ${run_args[*]} --model tiny --format both --batch 4 --steps 6 --check --split-repeats 0 --out '$work/runs/smoke' | tee '$work/smoke.txt'"
for t in tests/runtime/cuda/cuda_step_kernels_test:10 tests/kernels/cuda/kernels_cuda_test:35 \
         tests/kernels/formats/cuda/formats_codecs_cuda_test:10 tests/runtime/cuda/cuda_backend_test:40 \
         tests/runtime/cuda/cuda_tp_test:25; do
  bin=${t%%:*}; cap=${t##*:}; name=$(basename "$bin")
  step "$name" "$cap" 8 "$bd/$bin" --gtest_brief=1 "--gtest_output=xml:$work/tests/$name.xml"
done
# 3. Measurements.
step copy_bandwidth 10 5 bash -o pipefail -c "'$bd/bench/qprof_copy_bandwidth' 1024 | tee '$work/copy.txt'"
copy_gbps=$(awk '/copy_bandwidth_gbps/{print $2}' "$work/copy.txt" 2>/dev/null)
[ "$mode" = device ] && echo "measured copy bandwidth: ${copy_gbps:-?} GB/s"
step kernel_bench 40 20 bash -o pipefail -c "'$bd/bench/qprof_kernel_bench' '${copy_gbps:-0}' 1,16,64 | tee '$work/bench.txt'"
for g in eager graph; do
  # The format/path split (three configurations, two repetitions) on the eager run only.
  extra=(--split-repeats 2); [ "$g" = graph ] && extra=(--cuda-graph --split-repeats 0)
  step "small_$g" 20 10 bash -o pipefail -c "'$qprof' ${run_args[*]} --model small --format both --batch 16 --steps 12 ${extra[*]} --out '$work/runs/small-$g' | tee '$work/small-$g.txt'"
done
# v4-flash, 4 layers: weights built and uploaded once per format for all three batch sizes
# (about 98 CPU-seconds of synthesis per layer: ~25 s on 16 cores), 11 timed steps each.
for fmt in mxfp4 nvfp4; do
  step "v4flash_$fmt" 65 40 bash -o pipefail -c "'$qprof' ${run_args[*]} --model v4-flash --layers 4 --format $fmt --batch 1,16,64 --steps 12 --out '$work/runs/v4-$fmt' | tee '$work/v4-$fmt.txt'"
done
# 4. The CUPTI collector, within what is left.
if [ "${DEVICE_CHECK_CUPTI:-1}" = 1 ]; then
  left=$(( budget - pack_reserve - $(elapsed) ))
  cupti_budget=$(( left > 95 ? 90 : left - 5 ))
  step cupti_checks "$(( cupti_budget > 25 ? cupti_budget : 25 ))" 25 env QPROF_CHECK_OUT="$work/cupti" \
    QPROF_CUPTI_BUDGET_S="$cupti_budget" bash scripts/device-check-cupti.sh "$bd"
fi
[ "$mode" = device ] && clocks after

# 5. Results: at most 8 files come back, 16 MiB each, two folders deep.
{
  echo "== device-check ($mode) done in $(elapsed)s of a ${budget}s budget"
  printf '%-26s %-16s %6s %6s\n' step status took cap
  total_cap=0
  for r in "${results[@]}"; do
    IFS='|' read -r n s t c <<<"$r"
    printf '%-26s %-16s %5ss %5ss\n' "$n" "$s" "$t" "$c"
    total_cap=$(( total_cap + c ))
  done
  echo "sum of caps ${total_cap}s (CUPTI takes what is left); total budget ${budget}s including unpack, preflight and ${pack_reserve}s to pack; steps that no longer fit are SKIPPED"
  if [ "$mode" = device ]; then
    echo "== copy bandwidth (measured, D2D, read+write): ${copy_gbps:-?} GB/s"
    echo "== eager vs CUDA graph (small, batch 16, 12 steps): token digests"
    for fmt in mxfp4 nvfp4; do
      e=$(grep -A30 "^$fmt:" "$work/small-eager.txt" 2>/dev/null | grep -m1 digest | awk '{print $NF}')
      g=$(grep -A30 "^$fmt:" "$work/small-graph.txt" 2>/dev/null | grep -m1 digest | awk '{print $NF}')
      if [ -n "$e" ] && [ "$e" = "$g" ]; then echo "  $fmt: IDENTICAL ($e)"; else echo "  $fmt: DIFFER eager=${e:-?} graph=${g:-?}"; fi
    done
    echo "== GPU tests (gtest XML: counts, first failures)"
    for x in "$work"/tests/*.xml; do
      [ -f "$x" ] || continue
      printf '  %-28s %s skipped="%s"\n' "$(basename "$x" .xml)" \
        "$(grep -m1 -oE 'tests="[0-9]+" failures="[0-9]+"' "$x")" "$(grep -c '<skipped' "$x")"
      grep -oE '<failure message="[^"]{0,200}' "$x" | sed 's/<failure message="/    FAILURE: /' | head -5
    done
    echo "== decode runs (qprof run --backend cuda; tokens/s over steady-state steps, GPU measured)"
    cat "$work"/smoke.txt "$work"/small-*.txt "$work"/v4-*.txt 2>/dev/null |
      grep -E 'tokens/s|setup [0-9]|check vs|^nvfp4 / mxfp4|as run \(|format alone|path alone|warning: the ratios' | sed 's/^/  /'
    echo "== kernel table (bench/kernel_bench.cc)"
    if [ -s "$work/bench.txt" ]; then cat "$work/bench.txt"; else echo "(no bench results)"; fi
  fi
} > "$summary"
cp "$summary" "$out/summary.txt"
[ -f "$work/bench.txt" ] && cp "$work/bench.txt" "$out/bench.txt"
tar -C "$work" -czf "$out/results.tar.gz" runs tests cupti $(cd "$work" && ls ./*.txt 2>/dev/null)
if [ "$(stat -c %s "$out/results.tar.gz")" -gt $(( 15 * 1024 * 1024 )) ]; then
  echo "results over 15 MiB: repacked without the HTML and Perfetto reports"
  tar -C "$work" -czf "$out/results.tar.gz" --exclude='*.html' --exclude='*.perfetto.json' runs tests cupti
fi
cat "$summary"
echo "== archive layout (\$OUT: at most 8 files, 16 MiB each, two folders deep)"
n=0; bad=0
while IFS= read -r f; do
  n=$((n + 1)); s=$(stat -c %s "$f"); rel=${f#$out/}
  depth=$(echo "$rel" | tr -cd / | wc -c)
  printf '  %-22s %10d bytes\n' "$rel" "$s"
  if [ "$s" -gt $(( 16 * 1024 * 1024 )) ] || [ "$depth" -gt 2 ]; then bad=1; fi
done < <(find "$out" -type f | sort)
echo "  $n files$([ "$n" -le 8 ] && [ "$bad" = 0 ] && echo ": within the limits" || echo ": OVER THE LIMITS")"
# device-check.log is complete once tee has drained.
exec 1>&- 2>&-
wait "$tee_pid" 2>/dev/null
