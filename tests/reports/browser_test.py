#!/usr/bin/env python3
"""Opens the HTML reports in headless Chromium and checks what a reader would see.

  browser_test.py --generator make_fixture_reports --artifacts DIR [--qprof QPROF]

For each report: the page loads with no console output at all (errors, uncaught
exceptions or stray logs), the inline script ran (sortable headers got their tabindex),
the numbers in the DOM equal the JSON written next to it, sorting and filtering work
(a self-test script is appended to a copy of the page and its verdict read back from the
DOM), nothing overflows at laptop width (1280 px) and the kernels table neither scrolls
sideways nor cuts a cell off there, no page cites the project's own notes, and screenshots
land in DIR (the CI artifact folder). With --qprof, the shared H100 Qwen trace is analysed
and its page checked the same way (skipped with a message when ../shared/testdata is
absent), and `qprof run` is run and its reports are checked and photographed too.

Exit 77 (ctest SKIP_RETURN_CODE) when no chromium is installed; nothing else skips.
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, args, url, profile_dir, timeout=90):
    cmd = [chromium] + FLAGS + ["--user-data-dir=" + profile_dir, "--enable-logging=stderr",
                                "--v=0"] + args + [url]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    return p.stdout, console, p.returncode


class Dom(html.parser.HTMLParser):
    """A tiny DOM: elements with tag, attributes, text and children."""

    VOID = {"meta", "br", "img", "input", "hr", "link", "rect", "line", "path", "circle"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = {"tag": "#root", "attrs": {}, "children": [], "text": ""}
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "children": [], "text": ""}
        self.stack[-1]["children"].append(el)
        if tag not in self.VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1]["children"].append({"tag": tag, "attrs": dict(attrs), "children": [],
                                           "text": ""})

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i]["tag"] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1]["children"].append({"tag": "#text", "text": data, "attrs": {},
                                           "children": []})


def parse(text):
    d = Dom()
    d.feed(text)
    return d.root


def walk(el):
    yield el
    for c in el["children"]:
        yield from walk(c)


def text_of(el):
    if el["tag"] == "#text":
        return el["text"]
    return "".join(text_of(c) for c in el["children"])


def by_id(root, ident):
    for el in walk(root):
        if el["attrs"].get("id") == ident:
            return el
    return None


def find_all(root, tag=None, cls=None, attr=None):
    out = []
    for el in walk(root):
        if tag and el["tag"] != tag:
            continue
        if cls and cls not in el["attrs"].get("class", "").split():
            continue
        if attr and attr not in el["attrs"]:
            continue
        out.append(el)
    return out


def close(a, b, rel=1e-6):
    return abs(float(a) - float(b)) <= rel * max(1.0, abs(float(a)), abs(float(b)))


SELFTEST = r"""
<script>
(function () {
  var out = {};
  try {
    var t = document.getElementById('kernels') || document.getElementById('diff-kernels');
    if (t) {
      var original = Array.prototype.slice.call(t.tBodies[0].rows);
      var heads = t.tHead.rows[0].cells, col = -1;
      for (var i = 0; i < heads.length; i++) if (/time$/.test(heads[i].textContent.trim()) && col < 0) col = i;
      out.time_col = col;
      heads[col].click();  // first click: descending
      var desc = Array.prototype.map.call(t.tBodies[0].rows, function (r) {
        return Number(r.cells[col].getAttribute('data-sort')); });
      heads[col].click();  // second click: ascending
      var asc = Array.prototype.map.call(t.tBodies[0].rows, function (r) {
        return Number(r.cells[col].getAttribute('data-sort')); });
      out.desc = desc; out.asc = asc;
      out.aria = heads[col].getAttribute('aria-sort');
      var input = document.querySelector('input[data-filter-table="' + t.id + '"]');
      input.value = out.filter_text = (original[0].querySelector('.kname .kn') || {}).textContent || '';
      input.dispatchEvent(new Event('input'));
      out.visible_after_filter = Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; }).length;
      input.value = ''; input.dispatchEvent(new Event('input'));
      out.visible_after_clear = Array.prototype.filter.call(t.tBodies[0].rows, function (r) { return !r.hidden; }).length;
      out.rows = t.tBodies[0].rows.length;
      // Put the rows back in their original order so the DOM checks see the page as served.
      original.forEach(function (r) { t.tBodies[0].appendChild(r); });
      heads[col].removeAttribute('aria-sort');
    }
    // Tables that scroll sideways inside their wrapper, and cells whose content is cut off
    // sideways (wider than the box that clips it).
    out.wide_tables = [];
    Array.prototype.forEach.call(document.querySelectorAll('.tablewrap'), function (w) {
      var tb = w.querySelector('table');
      if (w.scrollWidth > w.clientWidth + 1) {
        out.wide_tables.push([tb && tb.id || '?', w.scrollWidth, w.clientWidth]);
      }
    });
    out.clipped = [];
    Array.prototype.forEach.call(document.querySelectorAll('table td, table td *'), function (el) {
      var cs = getComputedStyle(el);
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 &&
          (cs.overflowX !== 'visible' || el.tagName === 'TD')) {
        var tb = el.closest('table');
        out.clipped.push([tb && tb.id || '?', el.tagName + '.' + el.className,
                          (el.textContent || '').trim().slice(0, 50)]);
      }
    });
    out.text = document.body.innerText;
    out.scroll_width = document.documentElement.scrollWidth;
    out.inner_width = window.innerWidth;
    out.svgs = document.querySelectorAll('svg').length;
  } catch (e) { out.error = String(e); }
  var pre = document.createElement('pre');
  pre.id = 'qprof-selftest';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def load_with_selftest(chromium, path, workdir, profile_dir):
    """Dumps the DOM of a copy of `path` with the self-test appended, at laptop width."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    copy = os.path.join(workdir, "selftest-" + os.path.basename(path))
    with open(copy, "w", encoding="utf-8") as f:
        f.write(page.replace("</body>", SELFTEST + "</body>"))
    dom_text, console, rc = run_chromium(chromium, ["--window-size=1280,800", "--dump-dom"],
                                         "file://" + copy, profile_dir)
    check(rc == 0, f"{path}: chromium exited {rc}")
    check(not console, f"{path}: console output: {console[:3]}")
    root = parse(dom_text)
    pre = by_id(root, "qprof-selftest")
    result = json.loads(text_of(pre)) if pre else {}
    check(pre is not None, f"{path}: self-test did not run")
    check("error" not in result, f"{path}: self-test error {result.get('error')}")
    return root, result


def check_interactive(name, st):
    if "desc" not in st:
        return
    check(st["desc"] == sorted(st["desc"], reverse=True), f"{name}: time column not sorted desc")
    check(st["asc"] == sorted(st["asc"]), f"{name}: time column not sorted asc")
    check(st["aria"] == "ascending", f"{name}: aria-sort is {st['aria']}")
    check(1 <= st["visible_after_filter"] < st["rows"] or st["rows"] == 1,
          f"{name}: filter by a kernel name left {st['visible_after_filter']} of {st['rows']}")
    check(st["visible_after_clear"] == st["rows"], f"{name}: clearing the filter hid rows")


# The project's own notes, which users do not have: no report may cite them.
INTERNAL_NAMES = ("FACTS.md", "DESIGN.md", "STYLE.md", "SOURCES.md")


def check_layout(name, st):
    check(st.get("scroll_width", 0) <= st.get("inner_width", 0) + 1,
          f"{name}: page overflows at laptop width ({st.get('scroll_width')} > "
          f"{st.get('inner_width')} px)")
    # The kernels table fits: no sideways scroll, no cell cut off.
    wide = [t for t in st.get("wide_tables", []) if t[0] in ("kernels",)]
    check(not wide, f"{name}: the kernels table scrolls sideways at 1280 px: {wide}")
    clipped = [c for c in st.get("clipped", []) if c[0] in ("kernels",)]
    check(not clipped, f"{name}: kernels table cells cut off at 1280 px: {clipped[:3]}")
    text = st.get("text", "")
    check(text, f"{name}: no page text read back")
    for internal in INTERNAL_NAMES:
        check(internal not in text, f"{name}: the page cites {internal}, a file users do not have")


def check_roofline(name, root, profile):
    """The roofline chart: one point per kernel with FLOPs and bytes, at the JSON's achieved
    TFLOP/s and intensity; one labelled roof per pipe those kernels use; no NaN anywhere."""
    plotted = [k for k in profile.get("kernels", [])
               if k.get("work_launches") and k.get("flops", 0) > 0 and k.get("bytes", 0) > 0
               and "achieved_tflops" in k]
    svg = by_id(root, "roofline")
    if not plotted or not profile.get("roofs", {}).get("memory_gbps"):
        check(svg is None, f"{name}: a roofline chart without kernels to plot")
        return
    check(svg is not None and svg["tag"] == "svg", f"{name}: no roofline chart")
    if svg is None:
        return
    points = find_all(svg, "g", "pt")
    check(len(points) == len(plotted), f"{name}: {len(points)} roofline points, JSON has "
          f"{len(plotted)} kernels with FLOPs and bytes")
    by_name = {p["attrs"].get("data-kernel"): p for p in points}
    for k in plotted:
        pt = by_name.get(k["name"])
        if not check(pt is not None, f"{name}: no roofline point for {k['name']}"):
            continue
        check(close(pt["attrs"]["data-tflops"], k["achieved_tflops"], 1e-4),
              f"{name}: {k['name']} point at {pt['attrs']['data-tflops']} TFLOP/s, JSON "
              f"{k['achieved_tflops']}")
        check(close(pt["attrs"]["data-intensity"], k["flops"] / k["bytes"], 1e-4),
              f"{name}: {k['name']} intensity")
        check(find_all(pt, "title") and find_all(pt, "circle"), f"{name}: point without mark")
    pipes = {k.get("roof_pipe") for k in plotted if k.get("roof_pipe")}
    roofs = find_all(svg, "g", "roof")
    labelled = {r["attrs"].get("data-pipe") for r in roofs
                if any(r["attrs"].get("data-pipe") in text_of(t) for t in find_all(r, "text"))}
    check(pipes <= labelled, f"{name}: roofs {sorted(pipes)} not all drawn and labelled "
          f"({sorted(labelled)})")
    numeric = {"cx", "cy", "r", "x", "y", "x1", "x2", "y1", "y2", "points", "width", "height",
               "transform", "viewBox", "data-tflops", "data-intensity", "data-ridge"}
    bad = [f"{el['tag']}.{a}={v}" for el in walk(svg) for a, v in el["attrs"].items()
           if a in numeric and v is not None and any(w in v.lower() for w in ("nan", "inf"))]
    check(not bad, f"{name}: roofline chart has non-finite values: {bad[:3]}")


def check_profile(name, root, profile):
    # The script ran: sortable headers became focusable.
    ths = [th for t in find_all(root, "table", "sortable") for th in find_all(t, "th")]
    check(ths and all(th["attrs"].get("tabindex") == "0" for th in ths),
          f"{name}: sortable headers have no tabindex (script did not run)")
    tps = by_id(root, "tokens-per-s")
    want = profile.get("totals", {}).get("tokens_per_s", 0)
    values = [el["attrs"]["data-value"] for el in walk(tps) if el["attrs"].get("data-value")] \
        if tps else []
    check(tps is not None, f"{name}: no tokens/s card")
    if want:
        check(values and close(values[0], want, 1e-3), f"{name}: tokens/s {values} != {want}")
    # Kernel rows: names and times in the JSON order.
    table = by_id(root, "kernels")
    check(table is not None, f"{name}: no kernels table")
    if table is not None:
        rows = [r for r in find_all(table, "tr") if "data-time-ns" in r["attrs"]]
        kernels = profile.get("kernels", [])
        check(len(rows) == len(kernels), f"{name}: {len(rows)} kernel rows, JSON has "
              f"{len(kernels)}")
        for r, k in zip(rows, kernels):
            cell = find_all(r, "td", "kname")
            kn = find_all(cell[0], "div", "kn") if cell else []
            check(kn and text_of(kn[0]) == k["name"],
                  f"{name}: kernel name {text_of(kn[0]) if kn else None!r} != {k['name']!r}")
            check(int(r["attrs"]["data-time-ns"]) == int(k["time_ns"]),
                  f"{name}: {k['name']} time {r['attrs']['data-time-ns']} != {k['time_ns']}")
            check(r["attrs"]["data-class"] == k["class"], f"{name}: {k['name']} class")
            if "tensor_pipe_pct" in k:
                check(close(r["attrs"].get("data-tensor-pipe-pct", -1), k["tensor_pipe_pct"], 1e-3),
                      f"{name}: {k['name']} tensor pipe %")
            else:
                check("data-tensor-pipe-pct" not in r["attrs"],
                      f"{name}: {k['name']} shows a tensor pipe % that was not measured")
    # Class split: one segment per class with the JSON share.
    split = by_id(root, "class-split")
    check(split is not None and split["tag"] == "svg", f"{name}: no class split chart")
    if split is not None:
        segs = {g["attrs"]["data-class"]: float(g["attrs"]["data-share"])
                for g in find_all(split, "g", "seg")}
        for c in profile.get("classes", []):
            if c.get("share", 0) > 0:
                check(c["class"] in segs and close(segs[c["class"]], c["share"], 1e-5),
                      f"{name}: split bar share of {c['class']}")
    timeline = by_id(root, "step-timeline")
    n_events = len(profile.get("timeline", []))
    if n_events:
        marks = find_all(timeline, "g", "ev") if timeline else []
        check(len(marks) == n_events, f"{name}: {len(marks)} timeline marks, JSON has {n_events}")
        check(all(find_all(m, "title") for m in marks), f"{name}: timeline marks lack tooltips")
    check_roofline(name, root, profile)
    if profile.get("ceilings", {}).get("formats"):
        wf = by_id(root, "waterfall")
        check(wf is not None and len(find_all(wf, "g", "ceil")) >= 2, f"{name}: no waterfall")
    host = any(d.get("kind") == "host_cpu" for d in profile.get("devices", []))
    banner = by_id(root, "provenance-banner")
    if host:
        check(banner is not None and "host CPU" in text_of(banner),
              f"{name}: host CPU run without the host banner")


def check_diff(name, root, diff):
    head = by_id(root, "headline")
    check(head is not None, f"{name}: no headline")
    roles = diff.get("roles", [])
    if head is not None and roles:
        # The role whose time per unit of work moved most (diffs normalised for the work each
        # side captured); older diffs: the largest change of total time.
        moved = diff.get("moved_role")
        key = (next(r for r in roles if r["key"] == moved) if moved else
               max(roles, key=lambda r: abs(int(r.get("delta_ns", 0)))))
        text = text_of(head)
        check(text.startswith(key["key"] + ":"), f"{name}: headline {text!r} is not about "
              f"{key['key']}")
        if moved:
            unit = diff.get("unit", "call")
            check(f"per {unit}" in text, f"{name}: headline lacks 'per {unit}': {text!r}")
        else:
            pct = "%.1f%%" % (100 * key.get("a_share", 0))
            check(pct in text, f"{name}: headline lacks A share {pct}: {text!r}")
        if key.get("a_class") and key.get("b_class") and key["a_class"] != key["b_class"]:
            check(f"{key['a_class']} \u2192 {key['b_class']}" in text,
                  f"{name}: headline lacks the class change: {text!r}")
    for side in ("a", "b"):
        el = by_id(root, "tps-" + side)
        want = diff.get(side, {}).get("tokens_per_s", 0)
        if want:
            check(el is not None and close(el["attrs"]["data-value"], want, 1e-3),
                  f"{name}: tokens/s of {side}")
        el = by_id(root, "tensor-" + side)
        check(el is not None and close(el["attrs"]["data-value"],
                                       diff.get(side, {}).get("tensor_share", 0), 1e-5),
              f"{name}: tensor share of {side}")
        check(by_id(root, "split-" + side) is not None, f"{name}: no split bar for {side}")
    host = "host" in diff.get("a", {}).get("provenance", "")
    banner = by_id(root, "provenance-banner")
    check(not host or (banner is not None and "host CPU" in text_of(banner)),
          f"{name}: host CPU diff without the host banner")
    pairs = by_id(root, "role-pairs")
    if roles:
        got = {g["attrs"]["data-key"]: (int(g["attrs"]["data-a-ns"]), int(g["attrs"]["data-b-ns"]))
               for g in find_all(pairs, "g", "pair")} if pairs else {}
        for r in sorted(roles, key=lambda r: -max(int(r.get("a_time_ns", 0)),
                                                  int(r.get("b_time_ns", 0))))[:10]:
            check(got.get(r["key"]) == (int(r.get("a_time_ns", 0)), int(r.get("b_time_ns", 0))),
                  f"{name}: role pair {r['key']} {got.get(r['key'])}")
    # Both sides' achieved rates per role, where either side has work.
    rated = [r for r in roles if any(k in r for k in ("a_achieved_gbps", "b_achieved_gbps",
                                                      "a_achieved_tflops", "b_achieved_tflops"))]
    achieved = by_id(root, "diff-achieved")
    if rated:
        check(achieved is not None, f"{name}: no achieved-rates table for {len(rated)} roles")
        shown = {r["attrs"].get("data-role") for r in find_all(achieved, "tr")
                 if "data-role" in r["attrs"]} if achieved else set()
        check(shown == {r["key"] for r in rated}, f"{name}: achieved rows {sorted(shown)}")
    else:
        check(achieved is None, f"{name}: an achieved-rates table without rates")
    table = by_id(root, "diff-kernels")
    if table is not None:
        statuses = [r["attrs"].get("data-status") for r in find_all(table, "tr")
                    if "data-status" in r["attrs"]]
        for st in ("only_a", "only_b"):
            want = sum(1 for k in diff.get("kernels", []) if k.get("status") == st)
            check(statuses.count(st) == want, f"{name}: {statuses.count(st)} rows {st}, JSON "
                  f"{want}")


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def dim(d):
    """A Dim3 as the report writes it: "x" alone, else "x×y×z"."""
    d = {"x": 1, "y": 1, "z": 1, **d}
    if d["y"] <= 1 and d["z"] <= 1:
        return str(d["x"])
    return f"{d['x']}\u00d7{d['y']}\u00d7{d['z']}"


def check_launch_lines(name, root, profile):
    """Every kernel row with a launch shows its shape under its name (computed here from the
    JSON's grid and block), and every flagged kernel its flag, in the row itself."""
    table = by_id(root, "kernels")
    rows = [r for r in find_all(table, "tr") if "data-time-ns" in r["attrs"]] if table else []
    for r, k in zip(rows, profile.get("kernels", [])):
        lines = find_all(r, cls="klaunch")
        launch = k.get("launch", {})
        if int(launch.get("launches", 0)) > 0:
            want = dim(launch["grid"]) + " \u00d7 " + dim(launch["block"])
            check(lines and want in text_of(lines[0]),
                  f"{name}: {k['name']}: launch {want!r} not under the name "
                  f"({text_of(lines[0]) if lines else None!r})")
        if k.get("diagnosis"):
            flag = ("under one wave" if k["diagnosis"]["kind"] == "parallelism_bound"
                    else "latency-bound")
            check(lines and flag in text_of(lines[0]), f"{name}: {k['name']}: no flag {flag!r}")


def check_real_trace(chromium, qprof, work, profile_dir, artifacts):
    """A real H100 trace (the shared 5 MB Qwen inference Kineto JSON): its report read at
    1280 px, the kernels table with launch details on it."""
    data = os.environ.get("QPROF_TESTDATA") or os.path.join(ROOT, "..", "shared", "testdata")
    trace = os.path.join(data, "kineto", "h100_qwen1.5-0.5b_inference.json.gz")
    if not os.path.exists(trace):
        print(f"skipped the real H100 page: {trace} not found (set QPROF_TESTDATA or place "
              f"../shared/testdata beside the project)", flush=True)
        return
    html_path, json_path = os.path.join(work, "h100.html"), os.path.join(work, "h100.json")
    p = subprocess.run([qprof, "analyze", trace, "--html", html_path, "--json", json_path],
                       capture_output=True, text=True, timeout=300)
    if not check(p.returncode == 0, f"qprof analyze {trace} exited {p.returncode}: "
                                    f"{p.stderr[-2000:]}"):
        return
    with open(json_path, encoding="utf-8") as f:
        profile = json.load(f)
    check(any(int(k.get("launch", {}).get("launches", 0)) > 0 for k in profile["kernels"]),
          "h100: the trace's kernels have no launch shapes (the layout check needs them)")
    root, st = load_with_selftest(chromium, html_path, work, profile_dir)
    check_layout("h100", st)
    check_interactive("h100", st)
    check_profile("h100", root, profile)
    check_launch_lines("h100", root, profile)
    screenshot(chromium, html_path, os.path.join(artifacts, "real-h100.png"), "1280,1000",
               profile_dir)


def screenshot(chromium, path, png, size, profile_dir):
    _, console, rc = run_chromium(chromium, [f"--window-size={size}", "--screenshot=" + png],
                                  "file://" + os.path.abspath(path), profile_dir)
    check(rc == 0 and os.path.getsize(png) > 10000, f"{png}: screenshot failed")
    check(not console, f"{path}: console output during screenshot: {console[:3]}")
    print("screenshot: " + png, flush=True)


def harness_self_check(chromium, workdir, profile_dir):
    """The console check must catch an uncaught error, or the page checks mean nothing."""
    bad = os.path.join(workdir, "bad.html")
    with open(bad, "w") as f:
        f.write("<!doctype html><body><script>undefinedFunction();</script></body>")
    _, console, _ = run_chromium(chromium, ["--dump-dom"], "file://" + bad, profile_dir)
    check(any("Uncaught" in l for l in console), "harness: an uncaught error went unnoticed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("--qprof", default="")
    args = ap.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: chromium is not installed (Debian: apt-get install chromium)")
        return SKIP
    os.makedirs(args.artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="qprof-browser-")
    profile_dir = os.path.join(work, "chromium-profile")
    reports = os.path.join(work, "fixture")
    subprocess.run([args.generator, reports], check=True)
    harness_self_check(chromium, work, profile_dir)

    # nvfp4.html is the same page as mxfp4.html with other numbers: mxfp4 (metrics measured)
    # and host (no metrics, host CPU) cover the profile page's branches.
    pages = [("mxfp4", "profile"), ("host", "profile"), ("diff", "diff"), ("host-diff", "diff")]
    for stem, kind in pages:
        path = os.path.join(reports, stem + ".html")
        with open(os.path.join(reports, stem + ".json"), encoding="utf-8") as f:
            data = json.load(f)
        root, st = load_with_selftest(chromium, path, work, profile_dir)
        check_layout(stem, st)
        check_interactive(stem, st)
        if kind == "profile":
            check_profile(stem, root, data)
            check_launch_lines(stem, root, data)
        else:
            check_diff(stem, root, data)
    screenshot(chromium, os.path.join(reports, "diff.html"),
               os.path.join(args.artifacts, "fixture-diff.png"), "1400,1000", profile_dir)
    screenshot(chromium, os.path.join(reports, "mxfp4.html"),
               os.path.join(args.artifacts, "fixture-mxfp4.png"), "1400,1000", profile_dir)
    screenshot(chromium, os.path.join(reports, "host.html"),
               os.path.join(args.artifacts, "fixture-host.png"), "1400,1000", profile_dir)
    screenshot(chromium, os.path.join(reports, "diff.html"),
               os.path.join(args.artifacts, "fixture-diff-full.png"), "1400,3400", profile_dir)
    screenshot(chromium, os.path.join(reports, "host-diff.html"),
               os.path.join(args.artifacts, "fixture-host-diff.png"), "1400,1000", profile_dir)

    if args.qprof:
        check_real_trace(chromium, args.qprof, work, profile_dir, args.artifacts)
        # The main job end to end on the tiny preset (fast): every report it writes for the
        # measured pair and the diff of the modelled projection.
        out = os.path.join(work, "qprof-out")
        p = subprocess.run([args.qprof, "run", "--model", "tiny", "--out", out],
                           capture_output=True, text=True, timeout=600)
        check(p.returncode == 0, f"qprof run exited {p.returncode}: {p.stderr[-2000:]}")
        if p.returncode == 0:
            check("diff.html" in p.stdout, "qprof run did not say where diff.html is")
            wanted = ["diff.html", "mxfp4.html"] + sorted(
                f for f in os.listdir(out) if f.startswith("diff.model-") and f.endswith(".html"))
            for f in ["mxfp4.qtrace", "mxfp4.json", "mxfp4.perfetto.json", "nvfp4.qtrace",
                      "nvfp4.json", "nvfp4.html", "nvfp4.perfetto.json", "diff.json"] + wanted:
                check(os.path.exists(os.path.join(out, f)), f"qprof run did not write {f}")
            for stem in wanted:
                path = os.path.join(out, stem)
                if not os.path.exists(path):
                    continue
                base = stem[:-5]
                with open(os.path.join(out, base + ".json"), encoding="utf-8") as f:
                    data = json.load(f)
                root, st = load_with_selftest(chromium, path, work, profile_dir)
                check_layout("run/" + base, st)
                check_interactive("run/" + base, st)
                if base.startswith("diff"):
                    check_diff("run/" + base, root, data)
                else:
                    check_profile("run/" + base, root, data)
            screenshot(chromium, os.path.join(out, "diff.html"),
                       os.path.join(args.artifacts, "run-diff.png"), "1400,1000", profile_dir)

    shutil.rmtree(work, ignore_errors=True)
    print(f"artifacts: {os.path.abspath(args.artifacts)}")
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all browser checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
