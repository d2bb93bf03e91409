"""Analyse many traces on a Ray cluster: `python -m qprof.ray_analyze TRACES... --json OUT`.

Each Ray task reads a group of trace files into a partial profile
(`qprof.analyze_partial`, what `qprof analyze --partial` writes); the driver merges the
partials in the order the files were given and finishes the analysis (`qprof.merge`).
The result is the Profile `qprof analyze TRACES...` gives on one machine: counts, sums,
min/max and per-trace busy time merge exactly; medians and p90s of kernels with more than
16384 launches come from the same mergeable sketch either way.

What scales: the files (one task per `--files-per-task` files, each task on one core);
a task's memory is its files' aggregation state (distinct kernels, streams, steps and a
bounded timeline sample), not the traces, and a partial handed back is small. Every
worker must see the trace paths (a shared filesystem, or the same paths on every node) and
import qprof (installed on every node).

    ray start --head                     # on the head node (ray start --address ... on others)
    python -m qprof.ray_analyze /shared/run/rank*.json.gz --address auto --json profile.json
    python -m qprof.ray_analyze rank*.json --address local --num-cpus 4   # no cluster

Ray is optional (`pip install .[ray]`); qprof itself does not need it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import List, Optional, Sequence

import qprof


def _groups(paths: Sequence[str], files_per_task: int) -> List[List[str]]:
    n = max(1, files_per_task)
    return [list(paths[i:i + n]) for i in range(0, len(paths), n)]


def _partial_of(paths: List[str]) -> bytes:
    # Runs in a Ray worker: one core per task, so one file at a time.
    import qprof as q

    return q.analyze_partial(paths, threads=1)


def ray_analyze(
    paths: Sequence[str],
    files_per_task: int = 1,
    device: Optional[str] = None,
    model: Optional[str] = None,
    label: Optional[str] = None,
    sass: Optional[Sequence[str]] = None,
) -> "qprof.Profile":
    """The Profile of `paths`, analysed as Ray tasks on the cluster `ray.init` connected to.

    files_per_task files are read by each task; the partials are merged on the caller in
    the order of `paths`, so the result does not depend on which task finished first.
    """
    import ray

    if not ray.is_initialized():
        raise RuntimeError("ray_analyze: call ray.init() first (or use the command line)")
    files = [os.path.abspath(os.fsdecode(p)) for p in paths]
    if not files:
        raise ValueError("no traces to analyse")
    task = ray.remote(num_cpus=1)(_partial_of)
    refs = [task.remote(g) for g in _groups(files, files_per_task)]
    partials = ray.get(refs)  # in submission order, i.e. the order of `paths`
    return qprof.merge(partials, device=device, model=model, label=label, sass=sass)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m qprof.ray_analyze",
        description="Analyse trace files as Ray tasks (a partial profile per task, merged "
        "on this process): the same Profile as `qprof analyze TRACES...`.")
    p.add_argument("traces", nargs="+", help="trace files of any kind qprof reads "
                   "(one per rank, say); every Ray worker must be able to read them")
    p.add_argument("--address", default="local",
                   help="'auto': the cluster `ray start --head` started on this node; "
                   "'local': a Ray instance of this process only; or a cluster address "
                   "(ray://host:10001). Default: local")
    p.add_argument("--num-cpus", type=int, default=None,
                   help="cores of the local instance (--address local only; default: all)")
    p.add_argument("--files-per-task", type=int, default=1,
                   help="trace files each task reads (default 1); more files per task "
                   "means fewer, longer tasks")
    p.add_argument("--json", help="write the Profile as JSON to this file")
    p.add_argument("--html", help="write the single-file HTML report to this file")
    p.add_argument("--device", help="spec-table device for ceilings (qprof devices)")
    p.add_argument("--model", help="model shape JSON for format ceilings")
    p.add_argument("--label", help="short label for this profile (used by diffs)")
    p.add_argument("--sass", action="append", help="cubin/fatbin or folder of cubins; "
                   "repeatable (read on this process)")
    p.add_argument("--top", type=int, default=15, help="kernels shown in the summary")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import ray
    except ImportError:
        print("qprof: error: Ray is not installed (pip install 'qprof[ray]', or "
              "pip install ray)", file=sys.stderr)
        return 2
    missing = [t for t in args.traces if not os.path.exists(t)]
    if missing:
        print(f"qprof: error: {missing[0]}: no such file", file=sys.stderr)
        return 2
    if args.address == "local":
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    else:
        if args.num_cpus is not None:
            print("qprof: error: --num-cpus is for --address local (a cluster has its own)",
                  file=sys.stderr)
            return 2
        ray.init(address=args.address, log_to_driver=False)
    start = time.monotonic()
    groups = len(_groups(args.traces, args.files_per_task))
    print(f"qprof: {len(args.traces)} traces in {groups} Ray tasks on "
          f"{int(ray.cluster_resources().get('CPU', 0))} cores", file=sys.stderr)
    try:
        profile = ray_analyze(args.traces, args.files_per_task, device=args.device,
                              model=args.model, label=args.label, sass=args.sass)
    except (ValueError, OSError) as e:
        # A task's error arrives as a RayTaskError that is also the task's exception type;
        # its cause holds the one-line message without the remote traceback.
        print(f"qprof: error: {getattr(e, 'cause', None) or e}", file=sys.stderr)
        return 2
    finally:
        ray.shutdown()
    print(profile.summary(top=args.top))
    if args.json:
        profile.to_json(args.json)
        print(f"qprof: wrote {args.json}", file=sys.stderr)
    if args.html:
        profile.to_html(args.html)
        print(f"qprof: wrote {args.html}", file=sys.stderr)
    print(f"qprof: analysed in {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
