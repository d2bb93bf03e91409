"""Profile, Diff and Trace: thin Python faces of the C++ objects in qprof._qprof."""
from __future__ import annotations

import functools
import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _qprof
from ._tables import columns_table, nested_rows, table

PathLike = Union[str, "os.PathLike[str]"]


@functools.lru_cache(maxsize=None)
def _required_keys(schema_name: str, definition: str) -> tuple:
    """The keys every row of `definition` has, from the shipped JSON Schema."""
    path = os.path.join(os.path.dirname(__file__), "schemas", f"{schema_name}.schema.json")
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)["$defs"].get(definition, {})
    except (OSError, ValueError, KeyError):
        return ()
    return tuple(d.get("required", ()))


# Rough heights of what a report page is made of, in CSS pixels, for the iframe's first
# size before its own script (below) measures the page: a notebook shows the report at
# about its length instead of a fixed box.
_LINE_PX = 22
_MIN_PX, _MAX_PX = 160, 4000


def _estimated_height(page: str) -> int:
    rows = page.count("<tr") + page.count("<p") + page.count("<li") + page.count("<h2")
    svgs = page.count("<svg")
    return max(_MIN_PX, min(_MAX_PX, 80 + _LINE_PX * rows + 120 * svgs))


def _iframe(page: str) -> str:
    # The report is a whole page with its own styles: isolated in an iframe so that it
    # neither inherits nor changes the notebook's CSS. It starts at the page's estimated
    # height and, where the notebook runs the frame's onload handler (a trusted output),
    # takes the height of its content.
    # The attribute is single-quoted, so only & and ' need escaping: the page's many double
    # quotes stay one byte each.
    srcdoc = page.replace("&", "&amp;").replace("'", "&#39;")
    return (
        f"<iframe srcdoc='{srcdoc}' "
        f'style="width:100%;height:{_estimated_height(page)}px;border:1px solid #ddd" '
        'onload="try{this.style.height=(this.contentDocument.documentElement.scrollHeight+4)'
        '+&#39;px&#39;}catch(e){}" title="qprof report"></iframe>'
    )


class Profile:
    """The analysis of one or more traces (`qprof analyze`).

    Tables are DataFrames when pandas is installed (lists of dicts otherwise), with the
    columns of the `--json` report: kernels, roles, classes, ranks, ranges, streams, steps,
    devices, sources, warnings. Times are integer nanoseconds, shares fractions of 1.
    """

    # table name -> message name in the Profile JSON Schema
    _TABLES = {
        "kernels": "KernelRow",
        "roles": "RoleRow",
        "classes": "ClassRow",
        "ranks": "RankRow",
        "ranges": "RangeRow",
        "streams": "StreamRow",
        "steps": "StepRow",
        "devices": "ProfileDevice",
        "sources": "Source",
        "warnings": "Warning",
        "timeline": "TimelineEvent",
        "copies": "CopyRow",
    }
    # tables nested in the Profile JSON: name -> (path, message name)
    _NESTED = {
        "collectives": (("comm", "collectives"), "CollectiveRow"),
        "comm_per_device": (("comm", "per_device"), "CommDeviceRow"),
        "idle_causes": (("idle", "causes"), "IdleCauseRow"),
        "host_sync": (("idle", "host", "sync"), "HostSyncRow"),
    }

    def __init__(self, core: "_qprof.Profile", top: int = 15):
        self._core = core
        self._top = top
        self._dict: Optional[Dict[str, Any]] = None

    # -- the JSON form ------------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """The Profile as `qprof analyze --json` writes it (a fresh copy each call)."""
        return json.loads(self._json())

    def _json(self) -> str:
        return self._core.to_json(pretty=False)

    def _d(self) -> Dict[str, Any]:
        if self._dict is None:
            self._dict = json.loads(self._json())
        return self._dict

    def to_json(self, path: Optional[PathLike] = None) -> Optional[str]:
        """The `--json` text; written atomically to `path` when given."""
        if path is not None:
            self._core.write_json(os.fsdecode(path))
            return None
        return self._core.to_json(pretty=True)

    # -- tables ---------------------------------------------------------------------------
    def _table(self, name: str) -> Any:
        rows = self._d().get(name, [])
        return table(rows, _required_keys("profile", self._TABLES[name]))

    def _nested(self, name: str) -> Any:
        path, definition = self._NESTED[name]
        return table(nested_rows(self._d(), *path), _required_keys("profile", definition))

    @property
    def kernels(self) -> Any:
        return self._table("kernels")

    @property
    def collectives(self) -> Any:
        """One row per collective type and process group: calls (graph-launched apart), bytes,
        time, algbw and busbw (NCCL's factors) against the link peak of the spec table."""
        return self._nested("collectives")

    @property
    def copies(self) -> Any:
        """One row per copy kind (HtoD, DtoH, DtoD, PtoP, memset) and memory pair: calls, bytes,
        time and GB/s against the link."""
        return self._table("copies")

    @property
    def comm_per_device(self) -> Any:
        """Communication and copy time per GPU: total, exposed (no compute kernel running) and
        hidden."""
        return self._nested("comm_per_device")

    @property
    def idle_causes(self) -> Any:
        """The idle gaps between kernels by cause (HTA's host wait, kernel wait, other)."""
        return self._nested("idle_causes")

    @property
    def host_sync(self) -> Any:
        """CPU time in synchronising calls (device, stream, event synchronise, synchronous
        copies)."""
        return self._nested("host_sync")

    @property
    def comm(self) -> Dict[str, Any]:
        """Profile.comm: exposed and hidden communication and copy time (sums over GPUs)."""
        return dict(self._d().get("comm", {}))

    @property
    def tp_diagnosis(self) -> Dict[str, Any]:
        """The tensor-parallel decode diagnosis; {} when some step runs no collective."""
        return dict(self._d().get("tp_diagnosis", {}))

    @property
    def roles(self) -> Any:
        return self._table("roles")

    @property
    def classes(self) -> Any:
        return self._table("classes")

    @property
    def ranks(self) -> Any:
        """One row per input trace (rank) when several traces were analysed together."""
        return self._table("ranks")

    @property
    def ranges(self) -> Any:
        return self._table("ranges")

    @property
    def streams(self) -> Any:
        return self._table("streams")

    @property
    def steps(self) -> Any:
        return self._table("steps")

    @property
    def devices(self) -> Any:
        return self._table("devices")

    @property
    def sources(self) -> Any:
        return self._table("sources")

    @property
    def warnings(self) -> Any:
        return self._table("warnings")

    @property
    def timeline(self) -> Any:
        return self._table("timeline")

    @property
    def totals(self) -> Dict[str, Any]:
        return dict(self._d().get("totals", {}))

    @property
    def ceilings(self) -> Dict[str, Any]:
        return dict(self._d().get("ceilings", {}))

    @property
    def label(self) -> str:
        return self._core.label

    # -- reports ----------------------------------------------------------------------------
    def to_html(self, path: Optional[PathLike] = None) -> Optional[str]:
        """The single-file HTML report; written atomically to `path` when given."""
        if path is not None:
            self._core.write_html(os.fsdecode(path))
            return None
        return self._core.to_html()

    def _repr_html_(self) -> str:
        return _iframe(self._core.to_html())

    def summary(self, top: Optional[int] = None, wide: bool = False) -> str:
        """The terminal summary `qprof analyze` prints (top: kernels shown, default the `top`
        given to analyze; wide: kernel names in full, as `--wide` and any pipe get them)."""
        return self._core.summary(color=False, top=self._top if top is None else top,
                                  wide=wide)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        t = self._d().get("totals", {})
        return (
            f"<qprof.Profile {self.label!r}: {t.get('kernel_count', 0)} kernel launches, "
            f"{t.get('kernel_time_ns', 0) / 1e6:.3f} ms kernel time, "
            f"{len(self._d().get('sources', []))} source(s)>"
        )

    # -- pickling (Ray and multiprocessing pass Profiles between processes) ----------------
    def __getstate__(self) -> bytes:
        return self._core.to_bytes()

    def __setstate__(self, state: bytes) -> None:
        self._core = _qprof.Profile.from_bytes(state)
        self._top = 15
        self._dict = None


class Diff:
    """Two profiles matched by role (`qprof diff`)."""

    _TABLES = {"kernels": "DiffRow", "roles": "DiffRow", "classes": "DiffRow",
               "ranks": "RankDiffRow", "comm": "CommDiffRow"}

    def __init__(self, core: "_qprof.Diff", top: int = 15):
        self._core = core
        self._top = top
        self._dict: Optional[Dict[str, Any]] = None

    def to_dict(self) -> Dict[str, Any]:
        """The Diff as `qprof diff --json` writes it."""
        return json.loads(self._core.to_json(pretty=False))

    def _d(self) -> Dict[str, Any]:
        if self._dict is None:
            self._dict = self.to_dict()
        return self._dict

    def to_json(self, path: Optional[PathLike] = None) -> Optional[str]:
        if path is not None:
            self._core.write_json(os.fsdecode(path))
            return None
        return self._core.to_json(pretty=True)

    def _table(self, name: str) -> Any:
        return table(self._d().get(name, []), _required_keys("diff", self._TABLES[name]))

    @property
    def kernels(self) -> Any:
        return self._table("kernels")

    @property
    def roles(self) -> Any:
        return self._table("roles")

    @property
    def classes(self) -> Any:
        return self._table("classes")

    @property
    def ranks(self) -> Any:
        return self._table("ranks")

    @property
    def comm(self) -> Any:
        """Collectives and copy kinds matched across the sides, time per unit and rates."""
        return self._table("comm")

    @property
    def headline(self) -> str:
        return self._d().get("headline", "")

    @property
    def verdict(self) -> Dict[str, Any]:
        """The regression gate's verdict (limits, checks, worst, summary), or {} when the
        diff was made without max_regression."""
        return self._d().get("verdict", {})

    @property
    def failed(self) -> bool:
        """True when a regression limit was exceeded (the CLI exits 3)."""
        return bool(self.verdict.get("failed", False))

    def to_html(self, path: Optional[PathLike] = None) -> Optional[str]:
        if path is not None:
            self._core.write_html(os.fsdecode(path))
            return None
        return self._core.to_html()

    def _repr_html_(self) -> str:
        # The notebook view is the diff itself; the report file (to_html) adds each side's
        # full profile below it, which would make the inline copy larger than the file.
        return _iframe(self._core.to_html_compact())

    def summary(self, top: Optional[int] = None, wide: bool = False) -> str:
        """The terminal summary `qprof diff` prints (top, wide: as for Profile.summary)."""
        return self._core.summary(color=False, top=self._top if top is None else top,
                                  wide=wide)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<qprof.Diff {self.headline!r}>"

    def __getstate__(self) -> tuple:
        return self._core.to_bytes()

    def __setstate__(self, state: tuple) -> None:
        self._core = _qprof.Diff.from_bytes(*state)
        self._top = 15
        self._dict = None


class Trace:
    """A trace as qprof reads it: GPU activities (kernels, copies, sets) and NVTX ranges.

    Timestamps are integer nanoseconds as the source gave them (absolute for PyTorch
    traces with baseTimeNanoseconds, relative for others).
    """

    def __init__(self, core: "_qprof.Trace"):
        self._core = core

    @property
    def header(self) -> Dict[str, Any]:
        """Provenance, devices, run and collector information (the trace's header)."""
        return json.loads(self._core.header_json())

    @property
    def activities(self) -> Any:
        """One row per GPU activity: kind, name, device_id, stream_id, start_ns, end_ns,
        duration_ns, nvtx_path, grid, block, role, class, evidence, ..."""
        return columns_table(self._core.activity_columns())

    @property
    def kernels(self) -> Any:
        """The activities of kind KERNEL."""
        cols = self._core.activity_columns()
        keep = [i for i, k in enumerate(cols["kind"]) if k == "KERNEL"]
        return columns_table({n: [v[i] for i in keep] for n, v in cols.items()})

    @property
    def ranges(self) -> Any:
        return columns_table(self._core.range_columns())

    @property
    def truncated(self) -> bool:
        return self._core.truncated

    @property
    def truncation_detail(self) -> str:
        return self._core.truncation_detail

    def __len__(self) -> int:
        return len(self._core)

    def __repr__(self) -> str:
        h = self.header
        return (
            f"<qprof.Trace {h.get('source_kind', '')} {h.get('source_path', '')!r}: "
            f"{len(self)} activities{' (truncated)' if self.truncated else ''}>"
        )
