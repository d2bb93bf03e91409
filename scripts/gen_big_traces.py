#!/usr/bin/env python3
"""Makes large traces for the ingest benchmarks (not tests) from the real ones.

  gen_big_traces.py kineto OUT.json [--mb 1000]   Kineto JSON of about that many MB: the
      events of the test data's Kineto traces repeated with shifted timestamps and
      correlation ids (so launches still pair up), plus their deviceProperties.
  gen_big_traces.py nsys OUT.sqlite [--kernels 1000000]   An nsys-schema SQLite export
      with that many kernel rows (real kernel names from the test data), one runtime launch
      per kernel and NVTX push/pop ranges around them.

Test data comes from $QPROF_TESTDATA or ../shared/testdata next to the project."""
import argparse
import gzip
import json
import os
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("QPROF_TESTDATA") or os.path.join(ROOT, "..", "shared", "testdata")


def load_kineto(name):
    with gzip.open(os.path.join(DATA, "kineto", name), "rb") as f:
        return json.loads(f.read())


def templates(events):
    """Each event as text with {ts} and {corr} holes, so copies cost string formatting only."""
    out = []
    for e in events:
        if e.get("ph") != "X" or not isinstance(e.get("ts"), (int, float)):
            continue
        e = dict(e)
        ts = e["ts"]
        e["ts"] = "@TS@"
        args = e.get("args")
        corr = None
        if isinstance(args, dict) and isinstance(args.get("correlation"), int):
            args = dict(args)
            corr = args["correlation"]
            args["correlation"] = "@CORR@"
            e["args"] = args
        text = json.dumps(e, separators=(", ", ": "))
        text = text.replace('"@TS@"', "{ts}").replace('"@CORR@"', "{corr}")
        text = text.replace("{", "{{").replace("}", "}}")
        text = text.replace("{{ts}}", "{ts}").replace("{{corr}}", "{corr}")
        out.append((text, float(ts), corr))
    return out


def gen_kineto(path, mb):
    sources = [load_kineto("h100_qwen1.5-0.5b_inference.json.gz"),
               load_kineto("a100x2_nccl_allreduce.json.gz")]
    tmpl = []
    for doc in sources:
        tmpl.extend(templates(doc["traceEvents"]))
    t0 = min(t for _, t, _ in tmpl)
    t1 = max(t for _, t, _ in tmpl)
    span = (t1 - t0) + 1000.0
    max_corr = max((c for _, _, c in tmpl if c is not None), default=0) + 1
    target = mb * 1000 * 1000
    written = 0
    copy = 0
    with open(path, "w") as f:
        head = '{"schemaVersion": 1, "deviceProperties": %s, "traceEvents": [\n' % json.dumps(
            sources[0].get("deviceProperties", []))
        f.write(head)
        written += len(head)
        first = True
        while written < target:
            shift = copy * span
            parts = []
            for text, ts, corr in tmpl:
                parts.append(text.format(ts="%.3f" % (ts - t0 + shift),
                                         corr=(corr + copy * max_corr) if corr is not None else 0))
            chunk = (",\n" if not first else "") + ",\n".join(parts)
            first = False
            f.write(chunk)
            written += len(chunk)
            copy += 1
        tail = '\n], "baseTimeNanoseconds": 1700000000000000000}\n'
        f.write(tail)
    print("%s: %.1f MB, %d copies of %d events" % (path, os.path.getsize(path) / 1e6, copy, len(tmpl)))


def gen_nsys(path, kernels):
    src = sqlite3.connect(os.path.join(DATA, "nsys", "h100x2_train_before.sqlite"))
    names = [r[0] for r in src.execute(
        "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.demangledName")]
    src.close()
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript("""
      PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
      CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
        deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
        shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
        cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
        gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
        blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
        dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER,
        localMemoryTotal INTEGER, gridId INTEGER, sharedMemoryExecuted INTEGER,
        graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
      CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
        eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,
        returnValue INTEGER NOT NULL, callchainId INTEGER);
      CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
        rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
        endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
    """)
    db.executemany("INSERT INTO StringIds VALUES (?, ?)",
                   [(i + 1, n) for i, n in enumerate(names)] + [(100000, "cudaLaunchKernel"),
                                                               (100001, "decode step")])
    pid = 4242
    gpid = pid << 24
    gtid = gpid | 4243
    step = 1000  # ns between launches; kernels last 700 ns

    def kernel_rows():
        for i in range(kernels):
            t = 1000000 + i * step
            n = 1 + i % len(names)
            yield (t + 100, t + 800, i % 2, 1, 7 + i % 4, i + 1, gpid, n, n, None, 1, 0, 64,
                   128, 1, 1, 256, 1, 1, 0, 4096, 0, 0, i, 0, 0, 0)

    def runtime_rows():
        for i in range(kernels):
            t = 1000000 + i * step
            yield (t, t + 50, 0, gtid, i + 1, 100000, 0, None)

    def nvtx_rows():
        for s in range(0, kernels, 100):  # one "decode step" range per 100 launches
            t = 1000000 + s * step - 10
            yield (t, t + 100 * step, 59, None, None, None, None, gtid, None, 100001, 0)

    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%s)" % ",".join("?" * 27),
                   kernel_rows())
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)",
                   runtime_rows())
    db.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?,?,?,?,?)", nvtx_rows())
    db.commit()
    db.close()
    print("%s: %.1f MB, %d kernel rows" % (path, os.path.getsize(path) / 1e6, kernels))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["kineto", "nsys"])
    p.add_argument("out")
    p.add_argument("--mb", type=int, default=1000, help="kineto: target size in MB")
    p.add_argument("--kernels", type=int, default=1000000, help="nsys: kernel rows")
    a = p.parse_args()
    if not os.path.isdir(DATA):
        sys.exit("gen_big_traces.py: no test data at %s (set QPROF_TESTDATA)" % DATA)
    if a.kind == "kineto":
        gen_kineto(a.out, a.mb)
    else:
        gen_nsys(a.out, a.kernels)


if __name__ == "__main__":
    main()
