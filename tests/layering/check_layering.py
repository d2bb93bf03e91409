#!/usr/bin/env python3
"""The module rules of docs/architecture.md, checked on every #include (as Perfetto's
include-violation check does for its tree). Exits 1 listing each violation as
`file:line: rule`.

Rules:
  1. Module dependencies: a file of module M may include headers of the modules M may
     depend on (DEPENDS below) and of M itself; analysis/ and reports/ never include
     runtime/, kernels/ or profiler/ headers. The front doors hold no operation of their
     own: cli/ (the command) and python/ (the module) include the library API (api/), the
     reports (to print and render), proto/ and base/ only, and never each other.
  2. CUDA stays in CUDA folders: a header (.h, .cuh) outside a `cuda/` or `cupti/` folder
     (tests/kernels/cuda, tests/profiler/cupti, ...) or profiler/inject includes no CUDA, CUPTI, NVTX or NCCL
     header, unless the include is compiled only by nvcc (inside `#if defined(__CUDACC__)`),
     so every such header builds without a CUDA toolkit. analysis/ and reports/ include no
     CUDA header at all, in any file.
  3. Rooms of analysis/: its folders are ordered bottom to top (ANALYSIS_ROOMS, as
     analysis/CMakeLists.txt adds them); a file of a room includes headers of its own room
     and of rooms below it only, so no arrow inside analysis/ runs upward. The pipeline files
     at the top of analysis/ (analyze.cc, ingest.cc) may include every room.

Usage: check_layering.py [ROOT]      check the tree at ROOT (default: this repository)
       check_layering.py --self-test a tree with deliberate violations must fail
"""
import os
import re
import sys
import tempfile

# Module -> modules it may include (besides itself). Third-party headers are not modules.
DEPENDS = {
    "base": set(),
    "proto": {"base"},
    "kernels": {"base", "proto"},
    "profiler": {"base", "proto"},
    "runtime": {"base", "proto", "kernels", "profiler"},
    "analysis": {"base", "proto"},
    "reports": {"base", "proto", "analysis"},
    # qprof's operations as a library: everything below the front doors.
    "api": {"base", "proto", "kernels", "profiler", "runtime", "analysis", "reports"},
    # The front doors: parse, call the API, print.
    "cli": {"base", "proto", "api", "reports"},
    "python": {"base", "proto", "api", "reports"},
}
# Rule 3: the rooms of analysis/, bottom first (analysis/CMakeLists.txt says what each holds).
ANALYSIS_ROOMS = ["names", "devices", "occupancy", "work", "classify", "sass", "importers",
                  "model", "aggregate", "ceilings", "diff"]
# Folders checked for rule 2 only (they test any module).
OTHER_DIRS = ["tests", "bench", "fuzz"]
SOURCE_EXT = (".h", ".cc", ".cu", ".cuh")
HEADER_EXT = (".h", ".cuh")
CUDA_HEADER = re.compile(
    r"^(cuda[^/]*\.h|cuda/|cupti[^/]*\.h|nccl[^/]*\.h|nvtx3?/|nvToolsExt[^/]*\.h|cub/|thrust/|"
    r"cute/|cutlass/|cooperative_groups|mma\.h|crt/|curand[^/]*\.h|cublas[^/]*\.h|"
    r"vector_types\.h|driver_types\.h|library_types\.h|nvrtc[^/]*\.h|sm_\d+_intrinsics)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IF = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b(.*)")
ELSE = re.compile(r"^\s*#\s*(else|elif)\b")
ENDIF = re.compile(r"^\s*#\s*endif\b")


def cuda_folder(rel):
    parts = rel.split("/")[:-1]
    if rel.startswith("profiler/inject/"):
        return True
    return any(p in ("cuda", "cupti") or p.endswith("_cuda") or p.endswith("_cupti")
               for p in parts)


def includes(path):
    """(line number, quote, header, only under nvcc) for every #include of `path`."""
    stack = []  # per open #if: whether its branch is nvcc-only
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = IF.match(line)
            if m:
                kind, cond = m.group(1), m.group(2)
                stack.append(kind != "ifndef" and "__CUDACC__" in cond and "!" not in cond)
                continue
            if ELSE.match(line):
                if stack:
                    stack[-1] = False
                continue
            if ENDIF.match(line):
                if stack:
                    stack.pop()
                continue
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2), any(stack)


def check(root):
    violations = []
    for top in list(DEPENDS) + OTHER_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in sorted(filenames):
                if not name.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                violations += check_file(path, rel, top)
    return violations


def analysis_room_violation(rel, inc):
    """Rule 3 for one include of a file under analysis/, or None."""
    parts = rel.split("/")
    target = inc.split("/")
    if len(parts) < 3 or len(target) < 3 or target[0] != "analysis":
        return None  # the pipeline files at the top, or not a room's header
    room, other = parts[1], target[1]
    if room == other:
        return None
    for r in (room, other):
        if r not in ANALYSIS_ROOMS:
            return f"analysis/{r}/ is not a room in ANALYSIS_ROOMS ({inc})"
    if ANALYSIS_ROOMS.index(other) > ANALYSIS_ROOMS.index(room):
        return (f"analysis/{room}/ may not include analysis/{other}/ (a room above it: the "
                f"arrow runs upward) ({inc})")
    return None


def check_file(path, rel, module):
    out = []
    header = rel.endswith(HEADER_EXT)
    for n, quote, inc, nvcc_only in includes(path):
        first = inc.split("/")[0]
        if quote == '"' and first in DEPENDS and module in DEPENDS:
            if first != module and first not in DEPENDS[module]:
                out.append(f"{rel}:{n}: {module}/ may not include {first}/ headers ({inc})")
        if quote == '"' and module == "analysis":
            v = analysis_room_violation(rel, inc)
            if v:
                out.append(f"{rel}:{n}: {v}")
        if quote == "<" and CUDA_HEADER.match(inc):
            if module in ("analysis", "reports"):
                out.append(f"{rel}:{n}: {module}/ must build without CUDA, includes <{inc}>")
            elif header and not cuda_folder(rel) and not nvcc_only:
                out.append(f"{rel}:{n}: header outside a cuda/ or cupti/ folder includes "
                           f"<{inc}> (keep CUDA types behind an interface or pimpl)")
    return out


def self_test():
    """The check must catch each kind of violation in a tree made for it."""
    bad = {
        "analysis/x/uses_runtime.cc": '#include "runtime/plan.h"\n',
        "reports/html/uses_cuda.cc": "#include <cuda_runtime_api.h>\n",
        "kernels/moe/leaks_cuda.h": "#include <cuda_runtime_api.h>\n",
        "runtime/leaks_nccl.h": "#include <nccl.h>\n",
        "profiler/uses_runtime.h": '#include "runtime/run.h"\n',
        "python/src/uses_runtime.cc": '#include "runtime/run.h"\n',
        "python/src/uses_cli.cc": '#include "cli/profile_output.h"\n',
        "python/src/uses_analysis.cc": '#include "analysis/diff/diff.h"\n',
        "cli/uses_analysis.cc": '#include "analysis/analyze.h"\n',
        "cli/uses_runtime.cc": '#include "runtime/run.h"\n',
        "cli/uses_python.cc": '#include "python/src/py_objects.h"\n',
        "analysis/classify/uses_aggregate.cc": '#include "analysis/aggregate/accumulator.h"\n',
        "analysis/classify/uses_sass.h": '#include "analysis/sass/sass_parser.h"\n',
    }
    fine = {
        "kernels/moe/cuda/launcher.h": "#include <cuda_runtime_api.h>\n",
        "profiler/cupti/decoder.h": "#include <cupti_activity.h>\n",
        "kernels/common/host_and_device.h":
            "#if defined(__CUDACC__)\n#include <cuda_bf16.h>\n#endif\n",
        "runtime/impl.cc": "#include <cuda_runtime_api.h>\n#include \"kernels/registry/registry.h\"\n",
        "cli/main.cc": '#include "api/run.h"\n#include "reports/terminal/terminal_report.h"\n',
        "python/src/module.cc": '#include "api/analyze.h"\n#include "reports/json/json_report.h"\n',
        "api/run.cc": '#include "runtime/run.h"\n#include "analysis/analyze.h"\n',
        "analysis/aggregate/uses_classify.cc": '#include "analysis/classify/context_rules.h"\n',
        "analysis/sass/uses_names.cc": '#include "analysis/names/kernel_name.h"\n',
        "analysis/analyze_top.cc": '#include "analysis/sass/sass_parser.h"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in {**bad, **fine}.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = check(root)
    flagged = {v.split(":")[0] for v in found}
    ok = flagged == set(bad)
    for v in found:
        print("  (expected) " + v)
    if not ok:
        print(f"self-test FAILED: flagged {sorted(flagged)}, expected {sorted(bad)}")
        return 1
    print(f"self-test ok: {len(bad)} deliberate violations caught, {len(fine)} allowed files pass")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    violations = check(root)
    for v in violations:
        print(v)
    if violations:
        print(f"layering: {len(violations)} violation(s) of the module rules "
              "(docs/architecture.md)")
        return 1
    print("layering: every #include follows the module rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
