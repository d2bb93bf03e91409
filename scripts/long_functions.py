#!/usr/bin/env python3
"""Lists the longest function bodies of the source tree (default: the top 25).

Uses Universal Ctags' end lines (`ctags --fields=+ne`), so the count is the definition's
span from its first line to its closing brace, comments and blank lines included: the
figure a reader scrolls through. Lambdas count towards their enclosing function.

  python3 scripts/long_functions.py            # top 25 over the source folders
  python3 scripts/long_functions.py -n 40 --min 60 runtime cli
"""
import argparse
import os
import subprocess
import sys

SOURCE_DIRS = ["base", "proto", "kernels", "profiler", "runtime", "analysis", "reports",
               "api", "cli", "python", "bench", "fuzz", "tests"]


def functions(root, dirs):
    cmd = ["ctags", "-R", "-o", "-", "--fields=+ne", "--languages=C++",
           "--langmap=C++:+.cu.cuh", "--kinds-C++=f"] + dirs
    out = subprocess.run(cmd, cwd=root, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split("\t")
        name, path = parts[0], parts[1]
        fields = dict(p.split(":", 1) for p in parts[3:] if ":" in p)
        if "line" not in fields or "end" not in fields:
            continue
        scope = fields.get("class") or fields.get("struct") or ""
        if scope:
            name = scope.split("::")[-1] + "::" + name
        start, end = int(fields["line"]), int(fields["end"])
        yield end - start + 1, path, start, name


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", default=SOURCE_DIRS)
    ap.add_argument("-n", type=int, default=25, help="rows to print")
    ap.add_argument("--min", type=int, default=0, help="only functions of at least this many lines")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [d for d in args.dirs if os.path.exists(os.path.join(root, d))]
    rows = sorted(functions(root, dirs), key=lambda r: (-r[0], r[1], r[2]))
    rows = [r for r in rows if r[0] >= args.min][: args.n]
    print(f"{'lines':>5}  function  (file:line)")
    for n, path, start, name in rows:
        print(f"{n:5d}  {name}  ({path}:{start})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
