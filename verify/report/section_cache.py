"""A cache of the report's own computations (claim sections, topic sections), kept beside the records.

A section's markdown is stored under ``OUT/.cache/sections/<name>-<key>.json``, written atomically.
The key hashes the section's name, ``quick``, the code version (every source and claim file, as the
record cache uses) and the records the section was given, so any change to the code or to the
records recomputes it. A hit is used only while every plot the markdown shows still exists.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable

from attnsim.verify.records import dumps as dumps_records
from attnsim.verify.sweep import atomic_write, code_version

_FILES = re.compile(r"\]\(((?:plots|tables)/[^)\s]+)\)")


def section_key(name: str, quick: bool, records: list[dict[str, Any]]) -> str:
    """The hash that names a cached section (see the module docstring)."""
    h = hashlib.sha256()
    for part in (name, str(quick), code_version(), dumps_records(records)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def cached_section(out: Path, name: str, quick: bool, records: list[dict[str, Any]], compute: Callable[[], str],
                   enabled: bool = True) -> str:
    """``compute()``'s markdown, from ``OUT/.cache/sections`` when an entry for these inputs is there."""
    if not enabled:
        return compute()
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    path = Path(out) / ".cache" / "sections" / f"{safe}-{section_key(name, quick, records)}.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        if all((Path(out) / f).is_file() for f in entry["files"]):
            return entry["markdown"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no entry, or a damaged one: compute afresh and overwrite it
    markdown = compute()
    atomic_write(path, json.dumps({"name": name, "markdown": markdown, "files": _FILES.findall(markdown)}))
    return markdown
