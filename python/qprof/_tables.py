"""Rows of a report as a pandas DataFrame when pandas is installed, else a list of dicts."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

try:  # pandas is optional: `pip install qprof[pandas]` or any environment that has it
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the no-pandas test in a subprocess
    _pd = None


def have_pandas() -> bool:
    return _pd is not None


def table(rows: Sequence[Dict[str, Any]], columns: Sequence[str] = ()) -> Any:
    """A DataFrame of `rows` (nested objects flattened to "a.b" columns, maps included:
    class_time_ns.simt), or the rows themselves without pandas. `columns` are the keys every
    row has (from the JSON Schema), so an empty table still has its columns."""
    if _pd is None:
        return list(rows)
    if not rows:
        return _pd.DataFrame(columns=list(columns))
    return _pd.json_normalize(list(rows), sep=".")


def columns_table(columns: Dict[str, List[Any]]) -> Any:
    """A DataFrame from columns (name -> list), or the rows as dicts without pandas."""
    if _pd is not None:
        return _pd.DataFrame(columns)
    names = list(columns)
    n = len(columns[names[0]]) if names else 0
    return [{k: columns[k][i] for k in names} for i in range(n)]


def nested_rows(doc: Dict[str, Any], *path: str) -> List[Dict[str, Any]]:
    """The list at `path` inside a report dict (e.g. "comm", "collectives"), [] when absent."""
    node: Any = doc
    for key in path:
        if not isinstance(node, dict):
            return []
        node = node.get(key, {})
    return list(node) if isinstance(node, list) else []
