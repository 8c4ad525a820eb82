"""The sweep's record cache: one JSON file per record, each file verifying itself.

A cache file holds an envelope, not a bare record::

    {"format": "attnsim-cache/1", "key": KEY, "point": {"claim", "params", "numerics", "seed"},
     "source": SOURCE_HASH, "checksum": SHA256_OF_RECORD_TEXT, "record": RECORD_TEXT}

On load the envelope must parse (UTF-8 JSON), name the key it is stored under, hash back to that key
from its own point and source hash, carry the checksum of its record text, and hold a record for the
same claim and seed. An entry that fails any of these (a file copied over another's, ``{}``, a
truncated or non-UTF-8 file) is renamed to ``*.bad``, counted, and its record is computed again: a
report never contains a record that was not computed for its row.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from attnsim.verify.records import dumps, loads

FORMAT = "attnsim-cache/1"

KeyFn = Callable[[dict[str, Any], str], str]  # (point fields, source hash) -> key


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def point_key(fields: dict[str, Any], source: str) -> str:
    """The cache key of a check: a hash of claim, parameters, numerics, seed and the source hash."""
    blob = json.dumps([fields["claim"], fields["params"], fields["numerics"], fields["seed"], source],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _checksum(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Cache:
    """Self-verifying records under ``root/<key[:2]>/<key>.json``; ``set_aside`` lists the files renamed."""

    def __init__(self, root: Path | str):
        """A cache under ``root``; nothing is set aside yet."""
        self.root = Path(root)
        self.set_aside: list[Path] = []

    def path(self, key: str) -> Path:
        """Where the record of ``key`` lives."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, fields: dict[str, Any], source: str) -> dict[str, Any] | None:
        """The record stored for ``key`` if its entry verifies; None when absent or set aside."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            self._set_aside(path)
            return None
        record = self._verified(raw, key, fields, source)
        if record is None:
            self._set_aside(path)
        return record

    @staticmethod
    def _verified(raw: bytes, key: str, fields: dict[str, Any], source: str) -> dict[str, Any] | None:
        try:
            env = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(env, dict) or env.get("format") != FORMAT or env.get("key") != key:
            return None
        point, text = env.get("point"), env.get("record")
        if not isinstance(point, dict) or not isinstance(text, str) or env.get("source") != source:
            return None
        try:
            if point_key(point, source) != key:
                return None
        except KeyError:
            return None
        if env.get("checksum") != _checksum(text):
            return None
        try:
            record = loads(text)
        except ValueError:
            return None
        if (not isinstance(record, dict) or record.get("claim") != fields["claim"]
                or record.get("seed") != fields["seed"] or "verdict" not in record):
            return None
        return record

    def _set_aside(self, path: Path) -> None:
        try:
            os.replace(path, path.with_name(path.name + ".bad"))
        except OSError:
            pass  # unreadable and immovable: still not trusted, and the new record is written over it
        self.set_aside.append(path)

    def put(self, key: str, fields: dict[str, Any], source: str, record: dict[str, Any]) -> None:
        """Store ``record`` (computed for ``fields``) under ``key`` in a self-verifying envelope."""
        text = dumps(record)
        env = {"format": FORMAT, "key": key, "point": fields, "source": source, "checksum": _checksum(text),
               "record": text}
        atomic_write(self.path(key), dumps(env))
