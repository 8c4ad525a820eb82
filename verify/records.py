"""One JSON encoding for check records, used by the cache, ``checks.json`` and every ``--json`` output.

Records hold non-finite floats (``error_bits`` is ``inf`` for exact agreement). Strict JSON has no
such numbers, so they are written as the strings ``"inf"``, ``"-inf"`` and ``"nan"`` and read back as
floats; anything else that JSON cannot hold (a sympy number, a path) is written as its ``str``.
"""

from __future__ import annotations

import json
import math
from typing import Any

_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def jsonable(obj: Any) -> Any:
    """``obj`` with non-finite floats as strings and tuples as lists: what :func:`dumps` writes."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


def restore(obj: Any) -> Any:
    """The inverse of :func:`jsonable` for the non-finite floats."""
    if isinstance(obj, str):
        return _NON_FINITE.get(obj, obj)
    if isinstance(obj, dict):
        return {k: restore(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [restore(v) for v in obj]
    return obj


def dumps(obj: Any, **kwargs: Any) -> str:
    """Strict JSON (no ``Infinity``/``NaN`` tokens) of a record or a list of records."""
    return json.dumps(jsonable(obj), allow_nan=False, default=str, **kwargs)


def loads(text: str) -> Any:
    """Parse what :func:`dumps` wrote, non-finite floats restored."""
    return restore(json.loads(text))


def split_varying(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the record's deterministic part, its measurements that vary from run to run).

    ``record["varying"]`` lists dotted paths (``counts.peak_bytes``, ``bounds.peak_bytes.ratio``,
    ``extra.summary``) of values that a rerun does not reproduce to the byte (peak bytes, times). They are
    taken out of the first part — what ``checks.json`` and ``checks.csv`` hold and what two runs must agree
    on — and returned beside it by path (``measurements.json``)."""
    det = loads(dumps(record))
    measured: dict[str, Any] = {}
    for path in record.get("varying") or ():
        *parents, leaf = path.split(".")
        node: Any = det
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and leaf in node:
            measured[path] = node.pop(leaf)
    return det, measured


def normalise(record: dict[str, Any]) -> dict[str, Any]:
    """A record exactly as it reads back from the cache, so fresh and cached records compare equal."""
    return loads(dumps(record))
