"""Symbolic theories kept on disk, so that a process does not take again the limits another one took.

Deriving one resource's theory (:func:`attnsim.theory.symbolic.analyse`) takes sympy's limits, which for the
longer formulas (the sort's closed upper formula of Lemma C.2, say) cost tens of seconds: more than the run of
a small check. A theory is stored under a name drawn from everything it is derived from — its key (claim,
resource, both formulas, the limit variable, the definitions) and a fingerprint of the code that derives it
(every module of this package) and of sympy's version — so an edit to a formula or to the derivation makes a
new name, never a stale hit. An entry is used only when it names that same key and fingerprint, its checksum
(SHA-256 of the rest) matches, and its expressions read back to the very trees stored (``srepr`` equal); anything
else (a truncated or edited file, another key's theory copied over, a file that is not JSON) is a miss, derived
again and written over.

The folder is ``$ATTNSIM_THEORY_STORE`` (``off``: no store), else ``attnsim/theory`` under ``$XDG_CACHE_HOME``
or ``~/.cache``; where it cannot be written, theories are derived in every process, as without a store.

A process that misses a theory derives it holding that theory's lock (:func:`claimed`, a ``.lock`` file beside the
entry): another process that misses the same theory meanwhile waits for the entry instead of taking the same
limits again. In the test suite's six workers, 13 of 203 derivations (about 30 of their 133 CPU s) were such
repeats.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import sympy as sp

try:
    import fcntl
except ImportError:  # no advisory file locks on this platform: a process derives whatever it misses
    fcntl = None  # type: ignore[assignment]

STORE_ENV = "ATTNSIM_THEORY_STORE"
_EXPRS = ("bound", "exact", "leading_constant")
_TEXTS = ("claim", "resource", "limit_var", "verdict", "note", "of")


def folder() -> Path | None:
    """Where theories are kept; None when the store is off."""
    chosen = os.environ.get(STORE_ENV)
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attnsim" / "theory"


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """SHA-256 of this package's sources and sympy's version: what a stored theory was derived by."""
    hashed = hashlib.sha256(sp.__version__.encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        hashed.update(source.name.encode() + b"\0" + source.read_bytes())
    return hashed.hexdigest()


def _name(key: tuple[Any, ...]) -> str:
    return hashlib.sha256(json.dumps([fingerprint(), list(key)], default=list).encode()).hexdigest() + ".json"


def _plain(key: tuple[Any, ...]) -> list[Any]:
    return json.loads(json.dumps(list(key), default=list))


def _checksum(entry: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps({k: v for k, v in entry.items() if k != "checksum"}, sort_keys=True).encode()
                          ).hexdigest()


def _encode(key: tuple[Any, ...], fields: dict[str, Any]) -> str:
    entry = {"key": _plain(key), "fingerprint": fingerprint(), **{f: fields[f] for f in _TEXTS},
             "factors": dict(fields["factors"]),
             **{f: None if fields[f] is None else sp.srepr(fields[f]) for f in _EXPRS}}
    return json.dumps({**entry, "checksum": _checksum(entry)})


def load(key: tuple[Any, ...]) -> dict[str, Any] | None:
    """The fields of the theory stored under ``key`` by this code, or None (no store, no entry, or an entry that
    does not verify)."""
    where = folder()
    if where is None:
        return None
    try:
        entry = json.loads((where / _name(key)).read_text(encoding="utf-8"))
        if (entry["key"], entry["fingerprint"], entry["checksum"]) != (_plain(key), fingerprint(), _checksum(entry)):
            return None
        exprs = {f: None if entry[f] is None else sp.sympify(entry[f]) for f in _EXPRS}
        if any(e is not None and sp.srepr(e) != entry[f] for f, e in exprs.items()):
            return None
        if not all(isinstance(entry[f], str) for f in _TEXTS) or not isinstance(entry["factors"], dict):
            return None
        return {**{f: entry[f] for f in _TEXTS}, "factors": dict(entry["factors"]), **exprs}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, SyntaxError, sp.SympifyError):
        return None


def save(key: tuple[Any, ...], fields: dict[str, Any]) -> None:
    """Store a theory's ``fields`` under ``key``, atomically (a reader sees the whole entry or none); a folder
    that cannot be written leaves the theory unstored."""
    where = folder()
    if where is None:
        return
    tmp = None
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, suffix=".part")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_encode(key, fields))
        os.replace(tmp, where / _name(key))
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def lock_path(key: tuple[Any, ...]) -> Path | None:
    """The file whose lock :func:`claimed` takes for ``key`` (None: no store)."""
    where = folder()
    return None if where is None else where / (_name(key).removesuffix(".json") + ".lock")


@contextmanager
def claimed(key: tuple[Any, ...]) -> Iterator[None]:
    """Hold ``key``'s lock for the block, waiting while another process holds it.

    The lock is a POSIX record lock (``lockf``) on a file beside the entry. Such a lock belongs to the process: a
    child forked meanwhile (the report's pool workers are forked while its local lane may be deriving) does not
    hold it, and it ends when the block closes the file or the process ends, however it ends. (An ``flock`` would
    stay held by every forked copy of the file until the last one closed.) Threads of one process share the lock
    and derive side by side, as without it. Where no lock can be taken (no store, a folder that cannot be
    written, no ``fcntl``), the block runs without one."""
    path = lock_path(key)
    fd = None
    if path is not None and fcntl is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            fd = None
    try:
        if fd is not None:
            fcntl.lockf(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the file releases the process's lock on it
