"""A cache of the report's own computations (claim sections, topic sections), kept beside the records.

A section's markdown is stored under ``OUT/.cache/sections/<name>-<key>.json`` in the record cache's
envelope (``verify/cache.py``: kind ``section``, the question as its key, a checksum over both). The
question is the section's name, ``quick``, the code version (every source and claim file, as the record
cache uses) and a hash of the records the section was given, so any change to the code or to the records
recomputes it. An entry that does not verify — edited, ``[]``, a folder, a FIFO, a link — is set aside
and computed again; a hit is used only while every plot and table the markdown shows still exists.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Callable

from attnsim.verify.cache import store, unseal
from attnsim.verify.records import dumps as dumps_records
from attnsim.verify.sweep import code_version

_FILES = re.compile(r"\]\(((?:plots|tables)/[^)\s]+)\)")


def section_question(name: str, quick: bool, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The key a cached section answers (see the module docstring)."""
    records_hash = hashlib.sha256(dumps_records(records).encode()).hexdigest()
    return {"section": name, "quick": quick, "source": code_version(), "records": records_hash}


def section_key(name: str, quick: bool, records: list[dict[str, Any]]) -> str:
    """The hash that names a cached section's file."""
    blob = json.dumps(section_question(name, quick, records), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _payload(text: str) -> tuple[str, list[str]] | None:
    try:
        entry = json.loads(text)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("markdown"), str):
        return None
    files = entry.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return entry["markdown"], files


def cached_section(out: Path, name: str, quick: bool, records: list[dict[str, Any]], compute: Callable[[], str],
                   enabled: bool = True) -> str:
    """``compute()``'s markdown, from ``OUT/.cache/sections`` when an entry for these inputs verifies."""
    if not enabled:
        return compute()
    root = Path(out) / ".cache"
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    path = root / "sections" / f"{safe}-{section_key(name, quick, records)}.json"
    question = section_question(name, quick, records)
    text = unseal(path, "section", question, root)
    hit = _payload(text) if text is not None else None
    if hit is not None and all((Path(out) / f).is_file() for f in hit[1]):
        return hit[0]
    markdown = compute()
    store(path, "section", question, json.dumps({"markdown": markdown, "files": _FILES.findall(markdown)}), root)
    return markdown
