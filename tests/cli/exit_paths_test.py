#!/usr/bin/env python3
"""What the qprof command says and exits with on the inputs users paste, on files written here.

Usage: exit_paths_test.py QPROF_BINARY
Exits 1 on the first failed check. Every input is made by this script: a PyTorch profiler
trace cut before its first kernel, an Nsight Compute details page as ncu writes it (ragged
rows), an `nsys stats` kernel summary, two traces of one name in two folders on two vendors.
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

QPROF = sys.argv[1]
checks = 0


def run(*args):
    p = subprocess.run([QPROF, *args], capture_output=True, text=True)
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
    return lines[0]


def kineto(path, kernels, device_name, vendor_key, pre_events=0):
    """kernels: (name, start_us, dur_us); pre_events host events before the first kernel."""
    props = {"id": 0, "name": device_name, "computeMajor": 9, "computeMinor": 0,
             "numSms": 132, "warpSize": 32 if vendor_key == "cuda" else 64}
    if vendor_key == "cuda":
        props["regsPerMultiprocessor"] = 65536
    else:
        props["gcnArchName"] = "gfx942:sramecc+:xnack-"
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::op_%d" % i, "pid": 1, "tid": 1,
               "ts": float(i), "dur": 0.5, "args": {"padding": "x" * 200}}
              for i in range(pre_events)]
    for corr, (name, ts, dur) in enumerate(kernels, 1):
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                       "ts": ts, "dur": dur, "args": {"device": 0, "stream": 7,
                                                      "correlation": corr}})
    doc = {"schemaVersion": 1, "deviceProperties": [props], "traceEvents": events}
    text = json.dumps(doc)
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return path


GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
NORM = "void at::native::rms_norm_kernel<float>(float*, float const*, int)"
ODD = "totally_unknown_kernel_xyz"


def step_kernels(gemm_us, norm_us, odd_us, steps=4):
    out, t = [], 0.0
    for _ in range(steps):
        for name, d in ((GEMM, gemm_us), (NORM, norm_us), (ODD, odd_us)):
            out.append((name, t, d))
            t += d + 2.0
    return out


def ncu_details(path):
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
            '"Metric Value","Rule Name","Rule Type","Rule Description",'
            '"Estimated Speedup Type","Estimated Speedup"\n')
    rows = []
    for kid, name, ops, dur in (("0", "void gemv_kernel<float>(float*)", "0", "6.46"),
                                ("1", "void Kernel2<cutlass_80_wmma_tensorop_bf16>(Params)",
                                 "603,979,776", "13.31")):
        for metric, unit, value in (("gpu__time_duration.sum", "us", dur),
                                    ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "", ops),
                                    ("dram__bytes_read.sum", "Mbyte", "2.33")):
            rows.append('"%s","1","python3","h","%s","1","7","(128, 1, 1)","(224, 1, 1)","0",'
                        '"12.0","Command line profiler metrics","%s","%s","%s",\n'
                        % (kid, name, metric, unit, value))
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "".join(rows))
    return path


def check_exits(tmp, good):
    """Exit paths: a cut input, outputs that cannot be written, a repeated input, bad values."""
    # A gzip cut before its first kernel: one line saying where, exit 2.
    full = kineto(os.path.join(tmp, "full.json.gz"), step_kernels(40, 4, 10), "NVIDIA H100",
                  "cuda", pre_events=4000)
    data = open(full, "rb").read()
    cut = os.path.join(tmp, "cut.json.gz")
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 4])
    rc, out, err = run("analyze", cut)
    line = one_error_line(rc, err, "gzip cut before any kernel")
    check("no kernel before the cut at" in line and "byte" in line, "the cut is located", line)
    check(out == "", "nothing printed on stdout for an input without kernels", out)

    # An output path that is a folder, and one path for two reports: refused before any work.
    rc, _, err = run("analyze", good, "--html", tmp)
    line = one_error_line(rc, err, "--html naming a folder")
    check("is a directory, not a file to write" in line, "the folder is named", line)
    same = os.path.join(tmp, "out.html")
    rc, _, err = run("analyze", good, "--json", same, "--html", same)
    line = one_error_line(rc, err, "--json and --html naming one file")
    check("--json and --html both name" in line, "both options named", line)
    check(not os.path.exists(same), "nothing written", same)
    rc, _, err = run("diff", good, good, "--json", same, "--html", same)
    one_error_line(rc, err, "diff: --json and --html naming one file")

    # The same input twice is refused, not analysed as two ranks.
    rc, _, err = run("analyze", good, os.path.join(tmp, ".", "good.json"))
    line = one_error_line(rc, err, "the same input twice")
    check("given twice" in line, "the repeat is named", line)

    # A bad option value names the option.
    rc, _, err = run("analyze", good, "--threads", "100000")
    line = one_error_line(rc, err, "--threads 100000")
    check("--threads" in line and "File does not exist" not in line, "the option is named", line)

    # Two vendors in one multi-rank analysis: analysed, with a warning.
    amd = kineto(os.path.join(tmp, "amd.json"), step_kernels(50, 5, 12), "AMD Instinct MI300X",
                 "rocm")
    rc, out, err = run("analyze", good, amd, "--json", "-")
    check(rc == 0, "two vendors analysed", err)
    codes = [w["code"] for w in json.loads(out)["warnings"]]
    check("vendors_mixed" in codes, "two vendors warned about", codes)


def check_pasted_inputs(tmp):
    """What users paste: an ncu details page and nsys stats summaries."""
    # The Nsight Compute details page as ncu writes it: read, device from its CC column,
    # measured classes from the tensor counters, no advice to pass the CSV it is.
    ncu = ncu_details(os.path.join(tmp, "ncu.details.csv"))
    rc, out, err = run("analyze", ncu, "--json", "-")
    check(rc == 0, "ncu details page analysed", err)
    prof = json.loads(out)
    check(prof["devices"][0]["arch"] == "sm_120", "device from the CC column", prof["devices"])
    by_name = {k["raw_name"]: k for k in prof["kernels"]}
    check(by_name["void gemv_kernel<float>(float*)"]["evidence"] == "measured"
          and by_name["void gemv_kernel<float>(float*)"]["class"] == "simt",
          "no tensor ops counted: SIMT, measured", by_name)
    check(by_name["void Kernel2<cutlass_80_wmma_tensorop_bf16>(Params)"]["class"] == "tensor",
          "tensor ops counted: tensor", by_name)
    msgs = " ".join(w["message"] for w in prof["warnings"])
    check("pass --ncu" not in msgs, "no advice to pass the ncu CSV it is", msgs)
    check("rtx-5090" in msgs or "rtx-pro-6000" in msgs, "the GPUs of CC 12.0 are named", msgs)
    check(prof["no_timeline"] != "", "ncu: no timeline claimed", prof["no_timeline"])

    # An nsys stats kernel summary: a profile without a timeline, said plainly.
    stats = os.path.join(tmp, "summary_cuda_gpu_kern_sum.csv")
    with open(stats, "w", encoding="utf-8") as f:
        f.write("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
                "StdDev (ns),Name\n"
                '70.0,7000,7,1000.0,1000.0,900,1100,50.0,"' + GEMM + '"\n'
                '30.0,3000,3,1000.0,1000.0,1000,1000,0.0,"' + NORM + '"\n')
    rc, out, err = run("analyze", stats)
    check(rc == 0, "nsys stats summary analysed", err)
    check(re.search(r"timeline\s+none: an nsys stats kernel summary", out) is not None
          and "busy (union)" not in out, "no timeline claimed", out)
    check("Idle" not in out, "no idle section", out)
    api = os.path.join(tmp, "cuda_api_sum.csv")
    with open(api, "w", encoding="utf-8") as f:
        f.write("Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),"
                "StdDev (ns),Name\n90.0,1000,10,100.0,100.0,90,110,5.0,cudaLaunchKernel\n")
    rc, _, err = run("analyze", api)
    line = one_error_line(rc, err, "an API summary")
    check("cuda_gpu_kern_sum" in line, "the report to export is named", line)


def check_same_name_diff(tmp):
    """A diff of two files of one name: labels, headline, both sides' warnings."""
    # Two traces of one name in two folders, on two devices: labelled by device, the
    # headline leads with the largest slowdown and the largest speedup, both sides' warnings
    # and unattributed shares in the Diff JSON.
    for folder, dev, vendor, g, n in (("h100", "NVIDIA H100 80GB HBM3", "cuda", 40, 6),
                                      ("mi300", "AMD Instinct MI300X", "rocm", 55, 3)):
        os.makedirs(os.path.join(tmp, folder), exist_ok=True)
        kineto(os.path.join(tmp, folder, "Qwen__1.json.gz"), step_kernels(g, n, 10), dev, vendor)
    a, b = os.path.join(tmp, "h100", "Qwen__1.json.gz"), os.path.join(tmp, "mi300", "Qwen__1.json.gz")
    rc, out, err = run("diff", a, b, "--steps-a", "4", "--steps-b", "4", "--json", "-")
    check(rc == 0, "diff of two files of one name", err)
    d = json.loads(out)
    check(d["a"]["label"] == "h100" and d["b"]["label"] == "mi300x", "labels by device",
          (d["a"]["label"], d["b"]["label"]))
    head = d["headline"]
    check("largest slowdown" in head and "largest speedup" in head and "within" not in head,
          "headline names the largest slowdown and speedup", head)
    check(head.startswith("gemm.dense:"), "headline leads with the largest change", head)
    for side in ("a", "b"):
        check(d[side]["unattributed_share"] > 0.1, side + ": unattributed share carried",
              d[side]["unattributed_share"])
        check("unknown_kernels" in [w["code"] for w in d[side]["warnings"]],
              side + ": unknown_kernels warning carried", d[side]["warnings"])
    rc, out, err = run("diff", a, b, "--steps-a", "4", "--steps-b", "4")
    check(rc == 0 and "[h100] unknown_kernels" in out and "[mi300x] unknown_kernels" in out,
          "terminal diff prints both sides' warnings", out)
    check("unattributed kernel time" in out, "terminal diff states the unattributed share", out)


def main():
    tmp = tempfile.mkdtemp(prefix="qprof_exit_paths_")
    good = kineto(os.path.join(tmp, "good.json"), step_kernels(40, 4, 10), "NVIDIA H100 80GB HBM3",
                  "cuda")

    check_exits(tmp, good)
    check_pasted_inputs(tmp)
    check_same_name_diff(tmp)
    print("ok: %d checks" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
