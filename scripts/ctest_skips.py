#!/usr/bin/env python3
"""Prints how many ctest tests were skipped and why, from ctest's log of the last run
(BUILD/Testing/Temporary/LastTest.log).

A GoogleTest binary that skipped any case exits with 77 (tests/gtest_main.cc) and ctest
counts it as skipped; the reasons are the GTEST_SKIP messages in its output. Other tests
(Python, shell) skip with exit code 77 too; their reason is the last line they printed.
Identical reasons are counted once per test.

Usage: ctest_skips.py BUILD_DIR     (exit status 0; prints nothing but a count of 0 when
                                     no test was skipped)
"""
import collections
import os
import re
import sys

TEST = re.compile(r"^\d+/\d+ Test: (.+)$")
GTEST_SKIPPED = re.compile(r"^\[  SKIPPED \] (\S+)")


def parse(log_text):
    """Yields (test name, status line, output) for each test of the log."""
    name, output, in_output, status = None, [], False, None
    for line in log_text.splitlines():
        m = TEST.match(line)
        if m:
            name, output, in_output, status = m.group(1), [], False, None
            continue
        if name is None:
            continue
        if line == "Output:":
            in_output = True
            continue
        if line.startswith("<end of output>"):
            in_output = False
            continue
        if in_output:
            if not (line.startswith("-----") and not output):
                output.append(line)
            continue
        if line.startswith("Test ") and line.endswith("."):
            status = line
        if line.startswith('"' + name + '" end time'):
            yield name, status or "", output
            name = None


def gtest_reasons(output):
    """(case, reason) of every skipped GoogleTest case in a binary's output."""
    reasons = []
    pending = []  # lines after the last "Skipped" marker
    collecting = False
    for line in output:
        if line.endswith(": Skipped") or line == "Skipped":
            collecting, pending = True, []
            continue
        m = GTEST_SKIPPED.match(line)
        if m and collecting:
            reasons.append((m.group(1), " ".join(l.strip() for l in pending if l.strip()) or "(no reason given)"))
            collecting = False
            continue
        if collecting and not line.startswith("["):
            pending.append(line)
    return reasons


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    log = os.path.join(sys.argv[1], "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(log):
        print(f"ctest_skips: no {log}: ctest has not run")
        return 0
    with open(log, encoding="utf-8", errors="replace") as f:
        tests = list(parse(f.read()))
    # ctest's log says "Test Passed." for a test that exited with its SKIP_RETURN_CODE, so a
    # GoogleTest binary's own "[  SKIPPED ]" lines count too (unless the test failed).
    skipped = [(n, out) for n, status, out in tests
               if "Skipped" in status or
               ("Failed" not in status and any(GTEST_SKIPPED.match(l) for l in out))]
    print(f"{len(skipped)} of {len(tests)} tests skipped" + (":" if skipped else ""))
    for name, out in skipped:
        reasons = gtest_reasons(out)
        if reasons:
            counts = collections.Counter(r for _, r in reasons)
            print(f"  {name}: {len(reasons)} case(s) skipped")
            for reason, n in counts.most_common():
                print(f"    {n} x {reason}")
        else:
            last = next((l.strip() for l in reversed(out) if l.strip()), "(no output)")
            print(f"  {name}: {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
