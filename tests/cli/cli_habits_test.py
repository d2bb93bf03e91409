#!/usr/bin/env python3
"""The qprof command's habits end to end, on the shared real traces.

Usage: cli_habits_test.py QPROF_BINARY [TESTDATA_DIR]   ($QPROF_TESTDATA wins when set)
Exits 77 (skipped) when the test data is absent, 1 on the first failed check.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

QPROF = sys.argv[1]
DATA = os.environ.get("QPROF_TESTDATA") or (sys.argv[2] if len(sys.argv) > 2 else "")
NCCL = os.path.join(DATA, "kineto", "a100x2_nccl_allreduce.json.gz")
MOCK = os.path.join(DATA, "nsys", "rtx3080_mock.sqlite")
BEFORE = os.path.join(DATA, "nsys", "h100x2_train_before.sqlite")
AFTER = os.path.join(DATA, "nsys", "h100x2_train_after.sqlite")
checks = 0


def run(*args, cwd=None):
    p = subprocess.run([QPROF, *args], capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, detail=""):
    global checks
    checks += 1
    if not cond:
        print("FAIL: %s\n%s" % (what, detail))
        sys.exit(1)


def one_error_line(rc, err, what):
    lines = [l for l in err.splitlines() if l.strip()]
    check(rc == 2, what + ": exit code 2", "rc=%d %s" % (rc, err))
    check(len(lines) == 1 and lines[0].startswith("qprof: error: "),
          what + ": exactly one error line", err)
    check(".tmp." not in err and ".partial" not in err, what + ": no temporary file named", err)
    return lines[0]


def help_and_typos():
    """help, --version, typos, and an option out of range named in one line."""
    rc, out, _ = run("help")
    check(rc == 0 and "analyze" in out and "record" in out, "qprof help lists the commands", out)
    rc, out, _ = run("help", "analyze")
    check(rc == 0 and "--model-shape" in out and "--top" in out and "=15" in out,
          "qprof help analyze: options with defaults", out)
    check("--model " not in out, "the deprecated --model is hidden in analyze's help", out)
    rc, out, _ = run("--version")
    check(rc == 0 and out.startswith("qprof "), "qprof --version", out)
    line = one_error_line(*run("analize", NCCL)[::2], "mistyped command")
    check("did you mean analyze?" in line, "did you mean analyze?", line)
    line = one_error_line(*run("help", "dif")[::2], "help for a mistyped command")
    check("did you mean diff?" in line, "help dif suggests diff", line)
    one_error_line(*run("analyze", NCCL, "--top", "0")[::2], "option out of range")


def errors_and_outputs(tmp):
    """Errors: one line naming the user's path; several outputs: all or none."""
    bad = os.path.join(tmp, "bad.txt")
    open(bad, "w").write("not a trace at all\n")
    line = one_error_line(*run("analyze", bad)[::2], "not a trace")
    check(bad in line, "the error names the input as given", line)
    one_error_line(*run("analyze", os.path.join(tmp, "missing.json"))[::2], "a missing input")

    # Several outputs: all or none.
    ok_json = os.path.join(tmp, "ok.json")
    rc, _, err = run("analyze", MOCK, "--json", ok_json, "--html", "/nonexistent-qprof/x.html")
    check(rc != 0 and "/nonexistent-qprof/x.html" in err, "unwritable --html fails naming it", err)
    check(not os.path.exists(ok_json), "--json not written when --html cannot be")
    check(not [f for f in os.listdir(tmp) if ".tmp." in f], "no temporary left", os.listdir(tmp))


def stdout_reports():
    """--json - on stdout, nothing else there; --csv; --wide by default in a pipe. Returns
    the Profile JSON."""
    rc, out, err = run("analyze", NCCL, "--json", "-")
    check(rc == 0, "--json - runs", err)
    profile = json.loads(out)  # stdout is exactly the JSON
    kernels = profile["kernels"]
    check(len(kernels) == 70 and all(k["raw_name"] for k in kernels),
          "every kernel row has its raw name", str(len(kernels)))
    check(profile["provenance_label"] == "imported" and
          profile["totals"]["provenance"] == "imported from " + NCCL and
          all(k["provenance"] == "imported from " + NCCL for k in kernels),
          "one provenance spelling", profile["totals"]["provenance"])
    rc, out, err = run("analyze", NCCL, "--csv", "--table", "kernels")
    rows = list(csv.DictReader(io.StringIO(out)))
    check(rc == 0 and len(rows) == 70, "--csv --table kernels: one row per kernel", out[:300])
    # int(): 64-bit integers are JSON strings or numbers, depending on the JSON writer.
    check(sum(int(r["time_ns"]) for r in rows) == int(profile["totals"]["kernel_time_ns"]) and
          [r["raw_name"] for r in rows] == [k["raw_name"] for k in kernels],
          "CSV rows add up to the JSON's kernel time, raw names alike")
    one_error_line(*run("analyze", NCCL, "--csv", "--json", "-")[::2], "--csv with --json -")
    longest = max(kernels, key=lambda k: len(k["name"]))["name"]
    rc, out, _ = run("analyze", NCCL, "--top", "70")
    check(len(longest) > 100 and longest in out, "full kernel names when stdout is a pipe")
    return profile


def threads_option(profile):
    """--threads N: documented, bad values name the option, any N gives the same Profile."""
    rc, out, _ = run("help", "analyze")
    check(rc == 0 and "--threads" in out and "one per core" in out, "help analyze: --threads", out)
    for bad in ("-2", "many", "1.5", "100000"):
        line = one_error_line(*run("analyze", NCCL, "--threads", bad)[::2], "--threads " + bad)
        check("--threads" in line, "a bad --threads value names the option", line)
    for n in ("0", "1", "2", "3"):  # 0: one per core, as in the API and Python
        rc, out, err = run("analyze", NCCL, "--threads", n, "--json", "-")
        check(rc == 0 and json.loads(out) == profile, "--threads %s: the same Profile" % n, err)


def analysis_options(tmp, profile):
    """--model-shape (and the deprecated --model), Profile JSON inputs, diff's options,
    import's outputs."""
    shape = os.path.join(tmp, "shape.json")
    open(shape, "w").write('{"active_params": 13e9, "batch": 16, "format": "mxfp4"}')
    rc, out, err = run("analyze", MOCK, "--model-shape", shape, "--json", "-")
    check(rc == 0 and json.loads(out)["ceilings"]["formats"], "--model-shape gives format ceilings", err)
    rc, out2, err = run("analyze", MOCK, "--model", shape, "--json", "-")
    check(rc == 0 and "--model is deprecated" in err and
          json.loads(out2)["ceilings"] == json.loads(out)["ceilings"], "--model still works, warned", err)

    # Profile JSON input to analyze, as diff takes it.
    pj = os.path.join(tmp, "p.json")
    check(run("analyze", NCCL, "--json", pj)[0] == 0, "analyze --json")
    rc, out, err = run("analyze", pj, "--json", "-")
    check(rc == 0 and json.loads(out)["totals"] == profile["totals"], "a Profile JSON reads back", err)
    one_error_line(*run("analyze", pj, "--device", "h100")[::2], "--device on a Profile JSON")

    # diff takes the analysis options.
    rc, out, err = run("diff", BEFORE, AFTER, "--top", "3", "--model-shape", shape, "--device",
                       "h100", "--json", "-")
    check(rc == 0, "diff with --top --model-shape --device", err)
    d = json.loads(out)
    check(any(r["a_raw_name"] for r in d["kernels"]), "diff kernel rows carry raw names")
    rc, out, err = run("diff", BEFORE, AFTER, "--csv", "--table", "roles")
    check(rc == 0 and "comm" in out and out.startswith("key,"), "diff --csv", out[:200])
    one_error_line(*run("diff", pj, AFTER, "--sass", MOCK)[::2], "--sass with a Profile JSON side")

    # import: --out is a folder, --qtrace a file.
    rc, _, err = run("import", "-q", MOCK, "--out", os.path.join(tmp, "traces"))
    check(rc == 0 and os.path.exists(os.path.join(tmp, "traces", "rtx3080_mock.qtrace")),
          "import --out DIR writes DIR/<input>.qtrace", err)
    rc, _, err = run("import", "-q", MOCK, "--qtrace", os.path.join(tmp, "m.qtrace"))
    check(rc == 0 and os.path.exists(os.path.join(tmp, "m.qtrace")), "import --qtrace FILE", err)


def perfetto_and_odd_values(tmp, profile):
    """Perfetto of an imported trace: class, role, evidence and qprof's row name per kernel;
    implausible Kineto values warned about and left out of the totals."""
    kernels = profile["kernels"]
    pf = os.path.join(tmp, "nccl.perfetto.json")
    rc, _, err = run("analyze", NCCL, "--perfetto", pf, "--json", os.path.join(tmp, "n.json"))
    check(rc == 0 and "wrote " + pf in err, "--perfetto with --json", err)
    events = [e for e in json.load(open(pf))["traceEvents"] if e.get("cat") == "kernel"]
    check(len(events) == int(profile["totals"]["kernel_count"]), "every kernel exported",
          "%d vs %s" % (len(events), profile["totals"]["kernel_count"]))
    names = {k["name"] for k in kernels}
    check(all(e["args"].get("class") and e["args"].get("role") and e["args"].get("evidence") and
              e["args"].get("qprof_name") in names for e in events),
          "imported kernels carry class, role, evidence and qprof_name", str(events[0]))

    # Implausible Kineto values are warned about and left out of the totals.
    odd = os.path.join(tmp, "odd.json")
    ev = lambda name, dur: {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                            "ts": 1000, "dur": dur, "args": {"device": 0, "stream": 7,
                                                             "correlation": 1}}
    json.dump({"traceEvents": [ev("good_kernel", 5), ev("huge_kernel", 9e12),
                               ev("string_kernel", "12")]}, open(odd, "w"))
    rc, out, err = run("analyze", odd, "--json", "-")
    check(rc == 0, "a trace with odd values still analyses", err)
    p = json.loads(out)
    warnings = " ".join(w["message"] for w in p["warnings"]) + " ".join(p.get("notes", []))
    check(int(p["totals"]["kernel_time_ns"]) == 5000, "only the plausible kernel is summed",
          str(p["totals"]))
    check("implausibly long" in warnings and "huge_kernel" in warnings,
          "the 9e12 us duration is warned about", warnings)
    check("non-numeric" in warnings, "the string duration is warned about", warnings)


def main():
    if not all(os.path.exists(p) for p in (NCCL, MOCK, BEFORE, AFTER)):
        print("SKIP: shared test data not found at %r (set QPROF_TESTDATA)" % DATA)
        return 77
    tmp = tempfile.mkdtemp(prefix="qprof_cli_habits_")
    help_and_typos()
    errors_and_outputs(tmp)
    profile = stdout_reports()
    threads_option(profile)
    analysis_options(tmp, profile)
    perfetto_and_odd_values(tmp, profile)
    print("ok: %d checks" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
