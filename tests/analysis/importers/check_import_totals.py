#!/usr/bin/env python3
"""Runs `qprof import` on every trace in the test data and checks its summary line against
totals computed here with nothing but the Python standard library (json + gzip + sqlite3):
an independent reading of the same files.

Usage: check_import_totals.py QPROF_BINARY [TESTDATA_DIR]
Exit 0 when every file agrees, 1 on any mismatch; prints a skip notice when there is no
test data (exit 0, since a fresh clone has no ../shared)."""
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal


def kineto_totals(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    count = total = ranges = 0
    for e in events:
        cat = str(e.get("cat", "")).lower()
        if e.get("ph") == "X" and cat == "kernel":
            count += 1
            ns = (Decimal(e["dur"]) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)
            total += int(ns)
        elif e.get("ph") == "X" and cat == "cuda_profiler_range":
            ranges += 1
    # A counter-only trace (no kernel events) lists its kernels as counter ranges: they are
    # kernels without a known duration.
    if count == 0:
        count = ranges
    return count, total


def nsys_totals(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    count, total = db.execute(
        "SELECT count(*), coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    return count, total


def main():
    qprof = sys.argv[1]
    data = os.environ.get("QPROF_TESTDATA") or (sys.argv[2] if len(sys.argv) > 2 else "")
    if not data or not os.path.isdir(data):
        print("SKIP: no test data directory (set QPROF_TESTDATA or create ../shared/testdata)")
        return 0
    failures = 0
    checked = 0
    for sub, fn in (("kineto", kineto_totals), ("nsys", nsys_totals)):
        d = os.path.join(data, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            want = fn(path)
            out = subprocess.run([qprof, "import", "-q", path], capture_output=True, text=True)
            m = re.search(r": (\d+) kernels, kernel time [0-9.]+ ms \((\d+) ns\)", out.stdout)
            if out.returncode != 0 or not m:
                print("FAIL %s: rc=%d %s %s" % (path, out.returncode, out.stdout, out.stderr))
                failures += 1
                continue
            got = (int(m.group(1)), int(m.group(2)))
            checked += 1
            # Round trip through .qtrace: the saved trace reads back with the same totals.
            tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "qprof_rt_%d.qtrace" % os.getpid())
            rt = subprocess.run([qprof, "import", "-q", path, "--qtrace", tmp], capture_output=True, text=True)
            back = subprocess.run([qprof, "import", "-q", tmp], capture_output=True, text=True)
            if os.path.exists(tmp):
                os.remove(tmp)
            m2 = re.search(r": qtrace: (\d+) kernels, kernel time [0-9.]+ ms \((\d+) ns\)", back.stdout)
            if rt.returncode != 0 or not m2 or (int(m2.group(1)), int(m2.group(2))) != got:
                print("FAIL %s: .qtrace round trip: %s %s" % (path, back.stdout, back.stderr))
                failures += 1
            status = "ok" if got == want else "FAIL"
            failures += got != want
            print("%s %s: qprof %d kernels %d ns, python %d kernels %d ns" %
                  (status, name, got[0], got[1], want[0], want[1]))
    if checked == 0:
        print("FAIL: no traces checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
