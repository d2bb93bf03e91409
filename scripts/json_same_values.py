#!/usr/bin/env python3
"""Checks that JSON reports differ only in how 64-bit integers are written.

  scripts/json_same_values.py OLD.json NEW.json [OLD2.json NEW2.json ...]
  scripts/json_same_values.py --git REV FILE...     (each FILE at REV against the work tree)

Two documents are the same when they are equal after reading every string that is an
integer ("1220926", the protobuf JSON form of a 64-bit field) as that integer, on either
side. Key order does not matter (protobuf prints map entries in no fixed order), and a key
present on one side only with a default value (0, "", false, [], {}) counts as the same
value: proto3 readers treat a missing field as its default, so such a key is a field added
to the schema since the old file was written (counted and listed, not a difference).
Exit code 1 and the first differences when they differ.
Used when goldens are regenerated after the JSON writer changed (README "JSON output").
"""
import json
import re
import subprocess
import sys

INT = re.compile(r"-?[0-9]+\Z")


def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str) and INT.match(v):
        return int(v)
    return v


def is_default(v):
    return v in (0, "", False, [], {}) and v is not None


def diffs(a, b, path="", out=None, defaults=None):
    out = [] if out is None else out
    defaults = [] if defaults is None else defaults
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                v = b[k] if k in b else a[k]
                if is_default(v):
                    defaults.append(f"{path}/{k}")
                else:
                    out.append(f"{path}/{k}: only in {'new' if k in b else 'old'}")
            else:
                diffs(a[k], b[k], f"{path}/{k}", out, defaults)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diffs(x, y, f"{path}[{i}]", out, defaults)
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {a!r} -> {b!r}")
    return out


def main(argv):
    pairs = []
    if argv[:1] == ["--git"]:
        rev = argv[1]
        for f in argv[2:]:
            old = subprocess.run(["git", "show", f"{rev}:{f}"], check=True,
                                 capture_output=True, text=True).stdout
            pairs.append((f"{rev}:{f}", json.loads(old), f, json.load(open(f))))
    else:
        if not argv or len(argv) % 2:
            sys.exit(__doc__)
        for o, n in zip(argv[::2], argv[1::2]):
            pairs.append((o, json.load(open(o)), n, json.load(open(n))))
    bad = 0
    for on, old, nn, new in pairs:
        defaults = []
        d = diffs(norm(old), norm(new), defaults=defaults)
        print(f"{nn}: {'same values' if not d else f'{len(d)} differences'}"
              f"{f' ({len(defaults)} fields at their default on one side only)' if defaults else ''}")
        for line in d[:10]:
            print("  " + line)
        bad += bool(d)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
