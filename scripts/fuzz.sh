#!/usr/bin/env bash
# Bounded libFuzzer runs of every importer, as CI runs them.
#
# Configures build-fuzz with clang (-DQPROF_CUDA=OFF -DQPROF_FUZZ=ON, the tree compiled
# under ASan + UBSan), builds the fuzz targets, makes a seed corpus (slices and whole files
# of ../shared/testdata when present, plus hand-made seeds), and runs each target for
# FUZZ_SECONDS (default 45). Exits non-zero on any crash, leak, timeout or OOM.
#
#   FUZZ_SECONDS=60 bash scripts/fuzz.sh          # all targets
#   bash scripts/fuzz.sh fuzz_kineto              # one target
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${FUZZ_SECONDS:-45}
build=${FUZZ_BUILD_DIR:-build-fuzz}
data=${QPROF_TESTDATA:-$root/../shared/testdata}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_kineto fuzz_nsys fuzz_ncu fuzz_detect fuzz_partial fuzz_shapes)

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang)"; exit 2; }
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DQPROF_CUDA=OFF -DQPROF_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$build" --target "${targets[@]}" -j"$(nproc)"

corpus="$build/fuzz-corpus"
rm -rf "$corpus"
mkdir -p "$corpus"/{fuzz_kineto,fuzz_nsys,fuzz_ncu,fuzz_detect,fuzz_partial,fuzz_shapes}
QPROF_BIN="${QPROF_BIN:-$root/build/cli/qprof}" python3 - "$corpus" "$data" <<'PY'
import gzip, os, sqlite3, sys
corpus, data = sys.argv[1], sys.argv[2]
def put(target, name, blob):
    with open(os.path.join(corpus, target, name), "wb") as f:
        f.write(blob)
# Hand-made seeds: both Kineto generations, a gzip, ncu details and raw pages.
new = b'''{"deviceProperties": [{"id": 0, "name": "H100", "computeMajor": 9}], "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 2, "ts": 1.5, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 2, "dur": 1,
  "args": {"correlation": 9}},
 {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 3.25, "dur": 4.125,
  "args": {"correlation": 9, "device": 0, "stream": 7, "grid": [1, 2, 3], "block": [4, 5, 6]}},
 {"ph": "X", "cat": "gpu_user_annotation", "name": "g", "pid": 0, "tid": 7, "ts": 3, "dur": 9},
 {"ph": "X", "cat": "cuda_profiler_range", "name": "k", "pid": 0, "tid": 0, "ts": 5, "dur": 1,
  "args": {"m.sum": 3}}], "baseTimeNanoseconds": 1000}'''
old = b'''{"traceEvents": [{"ph": "X", "cat": "Runtime", "name": "l", "pid": "p", "tid": "5", "ts": 10,
 "dur": 2, "args": {"correlation": 1}}, {"ph": "X", "cat": "Kernel", "name": "o", "pid": 1,
 "tid": "stream 7", "ts": 11, "dur": 10, "args": {"correlation": 1}}, {"ph": "X", "cat": "Memcpy",
 "name": "Memcpy HtoD", "pid": 1, "tid": 7, "ts": 30, "dur": 1, "args": {"bytes": 4}}]}'''
# A graph capture (ROCm launch records name their kernel) with a replay of it in one file.
capture = b'''{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "capture_1_DECODE", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
 {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamBeginCapture", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
 {"ph": "X", "cat": "cpu_op", "name": "vllm::moe_forward", "pid": 1, "tid": 1, "ts": 5, "dur": 10},
 {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 2,
  "args": {"kernel": "k", "correlation": 3}},
 {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamEndCapture", "pid": 1, "tid": 1, "ts": 40, "dur": 1},
 {"ph": "X", "cat": "cuda_runtime", "name": "hipGraphLaunch", "pid": 1, "tid": 1, "ts": 60, "dur": 5,
  "args": {"correlation": 9}},
 {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 3, "ts": 70, "dur": 4,
  "args": {"correlation": 9, "device": 0, "stream": 3}}]}'''
put("fuzz_kineto", "capture.json", capture)
# A cpu_op recorded with shapes launching the kernel (record_shapes=True).
shapes = new.replace(b'''{"ph": "X", "cat": "cuda_runtime"''', b'''{"ph": "X", "cat": "cpu_op",
 "name": "aten::mm", "pid": 1, "tid": 2, "ts": 1.75, "dur": 3, "args": {"Input Dims": [[8, 4],
 [4, 2]], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Concrete Inputs": ["", ""]}},
 {"ph": "X", "cat": "cuda_runtime"''', 1)
put("fuzz_kineto", "shapes.json", shapes)
# The shape parser: op, Input Dims, Input type, Concrete Inputs (one per line), and emit_nvtx names.
put("fuzz_shapes", "mm.txt", b'aten::mm\n[[8944,1024],[1024,2816]]\n["c10::BFloat16","c10::BFloat16"]\n["",""]')
put("fuzz_shapes", "flash.txt", b'aten::_flash_attention_forward\n[[16,559,16,64],[16,559,16,64],'
    b'[16,559,16,64],[],[],[],[],[],[],[],[]]\n["c10::BFloat16","c10::BFloat16","c10::BFloat16",'
    b'"","","Scalar","Scalar","Scalar","Scalar","Scalar","Scalar"]\n["","","","","","559","559",'
    b'"0.","True","False","0.125"]')
put("fuzz_shapes", "cat.txt", b'aten::cat\n[[[2,3],[2,3]],[]]\n["TensorList","Scalar"]\n["","0"]')
put("fuzz_shapes", "conv.txt", b'aten::cudnn_convolution\n[[8,3,224,224],[64,3,11,11],[],[],[],[]]\n'
    b'["float","float","ScalarList","ScalarList","ScalarList","Scalar"]\n["","","[2, 2]","[4, 4]","[1, 1]","1"]')
put("fuzz_shapes", "paged.txt", b'sglang_profiler::attention_paged_attention_ragged_100\n[[32,32,128],[1],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33]]\n'
    b'["c10::BFloat16","unsigned char","c10::BFloat16","c10::BFloat16","c10::BFloat16","int"]\n["","","","","",""]')
put("fuzz_shapes", "convbwd.txt", b'aten::convolution_backward\n[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]\n'
    b'["c10::BFloat16","c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar","ScalarList"]\n'
    b'["","","","[0]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"]')
put("fuzz_shapes", "step.txt", b'execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)')
put("fuzz_shapes", "nvtx.txt", b'aten::addmm, seq = 11, op_id = 2, sizes = [[1024], [64, 512], [512, 1024], [], []], input_op_ids = [(1,0)]')
for t in ("fuzz_kineto", "fuzz_detect"):
    put(t, "new.json", new)
    put(t, "old.json", old)
    put(t, "new.json.gz", gzip.compress(new))
details = (b'==PROF== Connected\n"ID","Process ID","Kernel Name","Stream","Grid Size","Block Size",'
           b'"Section Name","Metric Name","Metric Unit","Metric Value"\n'
           b'"0","1","void k<4>(int)","7","(1, 2, 3)","(4, 1, 1)","S","Duration","usecond","1,234.5"\n'
           b'"0","1","void k<4>(int)","7","(1, 2, 3)","(4, 1, 1)","S",'
           b'"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active","%","12"\n')
raw = (b'"ID","Kernel Name","dram__bytes.sum","gpu__time_duration.sum"\n"","","Kbyte","nsecond"\n'
       b'"0","k","1,024","5,000"\n"1","k","n/a","7"\n')
for t in ("fuzz_ncu", "fuzz_detect"):
    put(t, "details.csv", details)
    put(t, "raw.csv", raw)
# A small nsys-shaped database.
path = os.path.join(corpus, "fuzz_nsys", "small.sqlite")
db = sqlite3.connect(path)
db.executescript("""
PRAGMA page_size=512;
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'kern(int)'), (2, 'range');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  shortName INTEGER, gridX INTEGER, blockX INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 7, 1, 16777216, 1, 1, 2, 3);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (5, 6, 16777217, 1);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
  textId INTEGER, globalTid INTEGER);
INSERT INTO NVTX_EVENTS VALUES (1, NULL, 59, NULL, 2, 16777217), (2, 3, 60, 'x', NULL, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
  bytes INTEGER, copyKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (30, 40, 0, 64, 1);
""")
db.commit()
db.execute("VACUUM")
db.close()
put("fuzz_detect", "small.sqlite", open(path, "rb").read())
# Partial profiles: written by qprof analyze --partial of the main build, when there is one.
qprof = os.environ.get("QPROF_BIN", "")
if qprof and os.path.exists(qprof):
    import subprocess
    for name in ("new.json", "old.json"):
        src = os.path.join(corpus, "fuzz_kineto", name)
        out = os.path.join(corpus, "fuzz_partial", name + ".qprofile")
        subprocess.run([qprof, "analyze", src, "--partial", out], capture_output=True)
        if os.path.exists(out):
            blob = open(out, "rb").read()
            put("fuzz_partial", name + ".qprofile", blob[8:])  # the proto after the magic
# Real traces: whole small files, and slices of the big ones (decompressed).
kdir = os.path.join(data, "kineto")
if os.path.isdir(kdir):
    for name in sorted(os.listdir(kdir)):
        p = os.path.join(kdir, name)
        blob = open(p, "rb").read()
        if len(blob) < 64 * 1024:
            put("fuzz_kineto", name, blob)
        text = gzip.decompress(blob) if name.endswith(".gz") else blob
        for n in (2048, 16384):
            put("fuzz_kineto", "%s.head%d" % (name, n), text[:n])
        mid = len(text) // 2
        put("fuzz_kineto", name + ".mid", b'{"traceEvents": [' + text[mid:mid + 8192])
ndir = os.path.join(data, "nsys")
if os.path.isdir(ndir):
    for name in sorted(os.listdir(ndir)):
        blob = open(os.path.join(ndir, name), "rb").read()
        if len(blob) <= 512 * 1024:
            put("fuzz_nsys", name, blob)
PY

status=0
for t in "${targets[@]}"; do
  out="$root/$build/fuzz-out/$t"
  rm -rf "$out"
  mkdir -p "$out"
  echo "fuzz.sh: $t for ${seconds}s ($(ls "$corpus/$t" | wc -l) seeds)"
  # -timeout: one input over 10 s is a hang; -rss_limit_mb: memory blow-ups are findings.
  # -seed: a fixed seed makes CI's bounded run replay the start of a sequence that longer
  # runs here have already explored, so a green CI is not luck (FUZZ_SEED=0 = random).
  if ! (cd "$out" && "$root/$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 \
          -seed="${FUZZ_SEED:-1}" \
          -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
          "$out" "$root/$corpus/$t" >"$out.log" 2>&1); then
    echo "fuzz.sh: $t FAILED (see $out.log):"
    grep -E "ERROR|SUMMARY|Test unit written" "$out.log" | head -20 || tail -20 "$out.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out.log" | tr '\n' ' '
    echo
    echo "fuzz.sh: $t ok"
  fi
done
exit $status
