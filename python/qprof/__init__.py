"""qprof from Python: where LLM decode time goes on NVIDIA GPUs.

The same analysis as the `qprof` command, run in-process by qprof's C++ libraries:

    import qprof
    p = qprof.analyze("trace.json.gz")          # PyTorch profiler, nsys SQLite, .qtrace, ...
    p.kernels                                     # pandas DataFrame (list of dicts without pandas)
    p.to_dict()                                   # the JSON `qprof analyze --json` writes
    p.to_html("report.html")                      # the single-file HTML report
    d = qprof.diff("mxfp4.qtrace", "nvfp4.qtrace")
    d.kernels, d.to_dict(), d.to_html("diff.html")
    parts = [qprof.analyze_partial(f) for f in rank_files]   # anywhere, e.g. Ray tasks
    qprof.merge(parts)                            # the Profile of all files at once

Many files on a Ray cluster: `python -m qprof.ray_analyze TRACES... --address auto`.

Errors raise ValueError (bad or unsupported input) or OSError (FileNotFoundError,
PermissionError) with the one-line message the CLI prints.
"""
from __future__ import annotations

import os
import warnings
from typing import Iterable, Optional, Sequence, Union

from . import _qprof
from ._objects import Diff, Profile, Trace

__all__ = [
    "Diff",
    "Profile",
    "SCHEMA_VERSION",
    "Trace",
    "__version__",
    "analyze",
    "analyze_partial",
    "diff",
    "merge",
    "merge_partials",
    "read_trace",
    "schema",
]

__version__: str = _qprof.__version__
#: The `schema_version` of the Profile and Diff JSON this module writes.
SCHEMA_VERSION: int = _qprof.SCHEMA_VERSION

PathLike = Union[str, "os.PathLike[str]"]


def _paths(p: Union[PathLike, Iterable[PathLike], None]) -> list:
    if p is None:
        return []
    if isinstance(p, (str, bytes, os.PathLike)):
        return [os.fsdecode(p)]
    return [os.fsdecode(x) for x in p]


def _path(p: Optional[PathLike]) -> str:
    return "" if p is None else os.fsdecode(p)


def _model_shape(model_shape: Optional[PathLike], model: Optional[PathLike]) -> str:
    """`model=` is the old name of `model_shape=` (the command's --model-shape)."""
    if model is not None:
        if model_shape is not None:
            raise ValueError("give model_shape only (model is its old name)")
        warnings.warn("model= is deprecated: use model_shape= (the command's --model-shape)",
                      DeprecationWarning, stacklevel=3)
        return _path(model)
    return _path(model_shape)


def _count(value: Optional[int], name: str) -> int:
    """A positive count (tokens, steps) or None; 0 is what the C++ side reads as unset."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"--{name.replace('_', '-')} {value!r}: must be a positive integer")
    return value


def analyze(
    paths: Union[PathLike, Sequence[PathLike]],
    device: Optional[str] = None,
    sass: Union[PathLike, Sequence[PathLike], None] = None,
    ncu: Optional[PathLike] = None,
    model: Optional[PathLike] = None,
    label: Optional[str] = None,
    graph_capture: Union[PathLike, Sequence[PathLike], None] = None,
    *,
    model_shape: Optional[PathLike] = None,
    tokens: Optional[int] = None,
    steps: Optional[int] = None,
    top: int = 15,
    threads: int = 0,
    perfetto: Optional[PathLike] = None,
) -> Profile:
    """Analyse one or more traces together, as `qprof analyze PATHS...`.

    Every option of the command, by its name (--model-shape is model_shape):

    paths: trace files of any kind qprof reads (.qtrace, Nsight Systems SQLite, PyTorch
        profiler / Kineto JSON or .json.gz, Nsight Compute CSV, `nsys stats` kernel
        summary CSV; one per rank is fine).
    device: spec-table device for ceilings (`qprof devices`), e.g. "h200".
    sass: cubin/fatbin/executable/shared library, or a folder of cubins such as
        ~/.triton/cache, whose machine code tells which kernels use tensor cores.
    ncu: Nsight Compute CSV whose per-kernel metrics are joined onto the traces.
    model_shape: model shape JSON for format ceilings of third-party traces (`model` is its
        deprecated old name).
    label: short label used by diffs.
    graph_capture: PyTorch profiler trace(s) taken while the CUDA (or HIP) graphs were
        captured (`--graph-capture`): the kernels of graph replays take the launch contexts
        they had at capture, and so their roles.
    tokens, steps: tokens generated and decode steps, for traces that do not record them.
    top: kernels the summary (`str(profile)`, `profile.summary()`) shows.
    threads: inputs read at once (0: one per core).
    perfetto: write the traces as Perfetto/Chrome trace JSON to this file.
    """
    files = _paths(paths)
    if not files:
        raise ValueError("no traces to analyse")
    return Profile(
        _qprof.analyze(
            files,
            device=device or "",
            sass=_paths(sass),
            ncu=_path(ncu),
            model_shape=_model_shape(model_shape, model),
            label=label or "",
            graph_capture=_paths(graph_capture),
            tokens=_count(tokens, "tokens"),
            steps=_count(steps, "steps"),
            threads=int(threads),
            perfetto=_path(perfetto),
        ),
        top=_top(top),
    )


def _top(top: int) -> int:
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 100000:
        raise ValueError(f"--top {top!r}: must be an integer from 1 to 100000")
    return top


def diff(
    a: Union[Profile, PathLike],
    b: Union[Profile, PathLike],
    device: Optional[str] = None,
    label_a: Optional[str] = None,
    label_b: Optional[str] = None,
    max_regression: Optional[str] = None,
    *,
    sass: Union[PathLike, Sequence[PathLike], None] = None,
    model_shape: Optional[PathLike] = None,
    ncu: Optional[PathLike] = None,
    ncu_a: Optional[PathLike] = None,
    ncu_b: Optional[PathLike] = None,
    tokens_a: Optional[int] = None,
    tokens_b: Optional[int] = None,
    steps_a: Optional[int] = None,
    steps_b: Optional[int] = None,
    graph_capture_a: Union[PathLike, Sequence[PathLike], None] = None,
    graph_capture_b: Union[PathLike, Sequence[PathLike], None] = None,
    top: int = 15,
) -> Diff:
    """Compare two runs, as `qprof diff A B`: Profiles, traces or Profile JSON reports.

    Every option of the command, by its name: the analysis options (device, sass,
    model_shape, ncu) apply to both sides, the per-side ones (label_a, ncu_a, tokens_a,
    steps_a, graph_capture_a, and the same for b) to one. Rows are matched by role first
    and normalised kernel name second. Two inputs with the same label are told apart by what
    differs between them (device, folder, format, file name), as the CLI does. With
    max_regression ("10%", "10%,comm=50%": `qprof diff --max-regression`) the Diff carries
    the regression gate's verdict (`Diff.verdict`, `Diff.failed`), as the CLI's exit status
    3 does. A side given as a Profile was analysed already: the options that need its trace
    are refused for it.
    """
    top = _top(top)
    if not isinstance(a, Profile) and not isinstance(b, Profile):
        return Diff(
            _qprof.diff_paths(
                os.fsdecode(a), os.fsdecode(b),
                label_a=label_a or "", label_b=label_b or "",
                ncu_a=_path(ncu_a), ncu_b=_path(ncu_b),
                tokens_a=_count(tokens_a, "tokens_a"), tokens_b=_count(tokens_b, "tokens_b"),
                steps_a=_count(steps_a, "steps_a"), steps_b=_count(steps_b, "steps_b"),
                graph_capture_a=_paths(graph_capture_a),
                graph_capture_b=_paths(graph_capture_b),
                ncu=_path(ncu), device=device or "", sass=_paths(sass),
                model_shape=_path(model_shape), max_regression=max_regression or "",
            ),
            top=top,
        )
    sides = []
    for x, label, side_ncu, tok, st, cap, name in (
        (a, label_a, ncu_a, tokens_a, steps_a, graph_capture_a, "a"),
        (b, label_b, ncu_b, tokens_b, steps_b, graph_capture_b, "b"),
    ):
        if isinstance(x, Profile):
            given = [f"{o}_{name}" for o, v in (("ncu", side_ncu), ("tokens", tok),
                                                 ("steps", st), ("graph_capture", cap))
                     if v is not None]
            if given or ncu is not None or sass is not None or model_shape is not None:
                raise ValueError(
                    f"{name}: a Profile is analysed already; "
                    f"{', '.join(given) or 'ncu, sass and model_shape'} need its trace: "
                    "pass them to analyze(), or give the file")
            sides.append(_relabel(x, label) if label else x)
        else:
            sides.append(analyze(x, device=device, sass=sass, ncu=side_ncu or ncu,
                                 label=label, graph_capture=cap, model_shape=model_shape,
                                 tokens=tok, steps=st))
    return Diff(_qprof.diff(sides[0]._core, sides[1]._core,
                            max_regression=max_regression or ""), top=top)


def _relabel(p: Profile, label: str) -> Profile:
    core = _qprof.Profile.from_bytes(p._core.to_bytes())
    core.label = label
    return Profile(core)


def read_trace(path: PathLike) -> Trace:
    """Read any trace qprof reads into qprof's own records (kernels, copies, NVTX ranges)."""
    return Trace(_qprof.read_trace(os.fsdecode(path)))


def schema(name: str) -> dict:
    """The JSON Schema of the "profile", "diff" or "run-summary" JSON, as a dict."""
    import json

    here = os.path.join(os.path.dirname(__file__), "schemas", f"{name}.schema.json")
    if not os.path.exists(here):
        raise ValueError(f"no schema named {name!r} (profile, diff, run-summary)")
    with open(here, encoding="utf-8") as f:
        return json.load(f)


def analyze_partial(
    paths: Union[PathLike, Sequence[PathLike]],
    ncu: Optional[PathLike] = None,
    threads: int = 0,
    graph_capture: Union[PathLike, Sequence[PathLike], None] = None,
) -> bytes:
    """The traces' aggregation state, as `qprof analyze --partial OUT.qprofile` writes it.

    The bytes are exactly a .qprofile file: small (one entry per distinct kernel, device,
    stream and step, not per launch), to be handed to another process or machine and
    finished with `merge` (or written to a file for `qprof merge`). Analysing files in
    several groups and merging the partials gives the Profile of analysing them at once.

    threads: the most threads used: files read at once and the workers one large file
    decodes on (0: one per core; `qprof analyze --threads`); a task given one core says 1.
    graph_capture: traces taken while the CUDA graphs were captured, as for `analyze`.
    """
    files = _paths(paths)
    if not files:
        raise ValueError("no traces to analyse")
    return _qprof.analyze_partial(
        files, ncu=_path(ncu), threads=int(threads), graph_capture=_paths(graph_capture)
    )


Partial = Union[bytes, bytearray, memoryview, PathLike]


def _partials(partials: Union[Partial, Iterable[Partial]]) -> tuple:
    if isinstance(partials, (bytes, bytearray, memoryview, str, os.PathLike)):
        partials = [partials]
    data, names = [], []
    for i, p in enumerate(partials):
        if isinstance(p, (bytes, bytearray, memoryview)):
            data.append(bytes(p))
            names.append(f"partial {i}")
        else:
            name = os.fsdecode(p)
            with open(name, "rb") as f:
                data.append(f.read())
            names.append(name)
    if not data:
        raise ValueError("no partial profiles to merge")
    return data, names


def merge(
    partials: Union[Partial, Iterable[Partial]],
    device: Optional[str] = None,
    sass: Union[PathLike, Sequence[PathLike], None] = None,
    model: Optional[PathLike] = None,
    label: Optional[str] = None,
    *,
    model_shape: Optional[PathLike] = None,
    top: int = 15,
) -> Profile:
    """Merge partial profiles in the order given and finish the analysis, as `qprof merge`.

    partials: bytes from `analyze_partial`, or paths of .qprofile files
        (`qprof analyze --partial`). The options are `analyze`'s: classification and
        ceilings run once, after the merge.
    """
    data, names = _partials(partials)
    return Profile(
        _qprof.merge(
            data,
            names=names,
            device=device or "",
            sass=_paths(sass),
            model_shape=_model_shape(model_shape, model),
            label=label or "",
        ),
        top=_top(top),
    )


def merge_partials(partials: Union[Partial, Iterable[Partial]]) -> bytes:
    """Partial profiles merged into one partial, as `qprof merge --partial`: a reduction in
    stages (merging partials of partials gives the same Profile)."""
    data, names = _partials(partials)
    return _qprof.merge_partials(data, names=names)
