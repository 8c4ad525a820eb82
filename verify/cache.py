"""Caches that verify themselves: one envelope for records, report sections and teeth passes.

Every cache file holds an envelope, never a bare payload::

    {"format": "attnsim-cache/3", "kind": KIND, "key": KEY, "checksum": HMAC-SHA256, "payload": TEXT}

``KEY`` is the whole question the payload answers (for a record: claim, every parameter after defaults,
numerics, seed and the hash of the code; for a section: its name, the sweep and the records it was
given; for a teeth pass: the code, the sweep and the claims), and the checksum covers the format, the
kind, the key and the payload text together. On load the file must be a regular file inside the cache
(a folder, a FIFO, a device or a symbolic link is never opened: a FIFO would block the reader), parse as
UTF-8 JSON, be of the expected kind, carry exactly the key the reader asks for and a checksum that
matches; the reader then checks the payload against the question field by field (:class:`Cache` for
records). Anything else is *set aside* — renamed ``*.bad``, counted in :data:`SET_ASIDE` and computed
again: never trusted, never fatal, never waited on. A folder or file standing where the cache needs a
folder is set aside the same way before a write.

The checksum is an HMAC keyed by a per-user secret kept outside every output folder (:func:`secret`), so
it guards against mistakes — a file copied over another's, a stale or foreign entry, a truncated write —
and against an edit resealed with this code but without that secret (another user's key, a folder copied
from another machine). A forger who holds the secret can still reseal: the field-by-field checks of
records (their counts against their own formulas) narrow that, and the sweep's spot audit
(:mod:`attnsim.verify.sweep`, ``audit``) recomputes a random sample of the cached records and fails on any
difference.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable

from attnsim.verify.records import dumps, loads, normalise

FORMAT = "attnsim-cache/3"
MAX_ENTRY_BYTES = 64 << 20
"""A cache file larger than this is not read (no entry the project writes comes near it)."""

SET_ASIDE: list[Path] = []
"""Every cache path this process set aside, in order (records, sections and teeth passes alike)."""

SECRET_ENV = "ATTNSIM_CACHE_SECRET"
"""The environment variable naming the secret's file (default ``$XDG_CONFIG_HOME/attnsim/cache.key``, with
``~/.config`` when XDG_CONFIG_HOME is unset)."""
SECRET_BYTES = 32
_SECRETS: dict[str, bytes] = {}
SECRET_NOTES: list[str] = []
"""Why this process seals with a key of its own (the secret's file could not be read or created), once."""

KeyFn = Callable[[dict[str, Any], str], str]  # (point fields, source hash) -> key


def atomic_write(path: Path, text: str, root: Path | None = None) -> None:
    """Write via a temporary file in the same folder and rename, so a crash never leaves half a file.

    A failure names ``path`` (a full disk says which file it could not write, not "stdout"). Below a cache
    ``root``, files standing where folders must be are set aside (:func:`make_folder`)."""
    path = Path(path)
    try:
        make_folder(path.parent, root)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        _unlink(tmp)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def make_folder(folder: Path, root: Path | None = None) -> None:
    """``folder`` and its parents; below ``root`` (a cache), a file standing where a folder must be is set
    aside first. Outside a cache nothing is moved: the error names the path."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return
    except (FileExistsError, NotADirectoryError):
        if root is None:
            raise
    for part in _within(folder, root):
        if os.path.lexists(part) and not part.is_dir():
            set_aside(part)
    folder.mkdir(parents=True, exist_ok=True)


def _within(path: Path, root: Path) -> list[Path]:
    """``root`` and the folders from it down to ``path`` (outermost first); empty when ``path`` is outside."""
    parts = [p for p in [path, *path.parents] if p == root or root in p.parents]
    return list(reversed(parts))


def set_aside(path: Path) -> None:
    """Rename ``path`` (a file, a folder, a FIFO, a link) to ``*.bad`` and count it; never raises."""
    target = path.with_name(path.name + ".bad")
    n = 1
    while os.path.lexists(target):
        target = path.with_name(f"{path.name}.bad{n}")
        n += 1
    try:
        os.rename(path, target)
    except OSError:
        pass  # unreadable and immovable: still not trusted, and the new entry is written over it
    SET_ASIDE.append(path)


def secret_path() -> Path:
    """Where the per-user secret that keys every checksum lives (:data:`SECRET_ENV`, else the user's config)."""
    named = os.environ.get(SECRET_ENV)
    if named:
        return Path(named).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(config) / "attnsim" / "cache.key"


def secret() -> bytes:
    """The per-user secret: :data:`SECRET_BYTES` random bytes in :func:`secret_path` (mode 0600), made on first
    use. It is created whole or not at all (written to a temporary file, then linked into place, so two
    processes that start together agree on one); a file of the wrong size is replaced. Where the file can be
    neither read nor made, this process seals with a random key of its own and says so once
    (:data:`SECRET_NOTES`): its entries then verify in no later run and are computed again — never trusted."""
    path = secret_path()
    known = _SECRETS.get(str(path))
    if known is not None:
        return known
    try:
        key = _read_or_make_secret(path)
    except OSError as exc:
        key = secrets.token_bytes(SECRET_BYTES)
        SECRET_NOTES.append(f"cache secret {path}: {exc.strerror or exc}; this run's cache entries are sealed with "
                            "a key of its own and will be computed again by the next run")
    _SECRETS[str(path)] = key
    return key


def _read_or_make_secret(path: Path) -> bytes:
    for _ in range(3):
        try:
            with open(path, "rb") as f:
                key = f.read(SECRET_BYTES + 1)
            if len(key) == SECRET_BYTES:
                return key
            os.unlink(path)  # not a key this code made: replaced, so every entry sealed with it is set aside
        except FileNotFoundError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(SECRET_BYTES))
            os.chmod(tmp, 0o600)
            try:
                os.link(tmp, path)  # fails when another process made it first: then that one is read
            except FileExistsError:
                pass
        finally:
            _unlink(tmp)
    raise OSError(0, "cannot keep a key file there", str(path))


def checksum(kind: str, key: Any, text: str) -> str:
    """HMAC-SHA256, keyed by the per-user :func:`secret`, of the format, the kind, the key (canonical JSON) and
    the payload text."""
    h = hmac.new(secret(), digestmod=hashlib.sha256)
    for part in (FORMAT, kind, json.dumps(key, sort_keys=True, default=str), text):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def seal(kind: str, key: Any, text: str) -> str:
    """The envelope of payload ``text`` answering ``key``."""
    return json.dumps({"format": FORMAT, "kind": kind, "key": key, "checksum": checksum(kind, key, text),
                       "payload": text})


def _read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file no larger than :data:`MAX_ENTRY_BYTES`; None when absent.

    ``lstat`` decides before anything is opened; the file is then opened without following links and
    without blocking, and checked again on the open descriptor (it may have been swapped in between).
    Raises ``ValueError`` for anything that is there but not a readable entry.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise ValueError("a file stands where a folder of the cache should be") from None
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
        raise ValueError("not a regular file of a sensible size")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read(MAX_ENTRY_BYTES + 1)
    except OSError as exc:
        raise ValueError(exc.strerror or str(exc)) from None
    finally:
        if fd >= 0:
            os.close(fd)


def unseal(path: Path, kind: str, key: Any, root: Path) -> str | None:
    """The payload text stored at ``path`` (inside the cache ``root``) for ``key``; None when there is none
    or it was set aside."""
    path = Path(path)
    try:
        raw = _read_regular(path)
        if raw is None:
            return None
        env = json.loads(raw.decode("utf-8"))
        ok = (isinstance(env, dict) and env.get("format") == FORMAT and env.get("kind") == kind
              and isinstance(env.get("payload"), str) and json.loads(json.dumps(key, default=str)) == env.get("key")
              and isinstance(env.get("checksum"), str)
              and hmac.compare_digest(env["checksum"], checksum(kind, key, env["payload"])))
    except (ValueError, UnicodeDecodeError, RecursionError):
        ok = False
    if not ok:
        _set_aside_entry(path, root)
        return None
    return env["payload"]


def _set_aside_entry(path: Path, root: Path) -> None:
    """Set aside the entry at ``path``, or the file inside ``root`` that stands where a folder should be."""
    if os.path.lexists(path):
        set_aside(path)
        return
    for part in _within(path.parent, root):
        if os.path.lexists(part) and not part.is_dir():
            set_aside(part)
            return
    SET_ASIDE.append(path)


def store(path: Path, kind: str, key: Any, text: str, root: Path) -> None:
    """Write payload ``text`` for ``key`` at ``path`` (inside the cache ``root``) in its envelope; anything
    but a regular file standing there, or a file where a folder must be, is set aside first."""
    path = Path(path)
    if os.path.lexists(path) and (path.is_symlink() or not path.is_file()):
        set_aside(path)
    atomic_write(path, seal(kind, key, text), root)


def record_consistent(record: Any, fields: dict[str, Any]) -> bool:
    """Whether ``record`` answers ``fields`` (claim, parameters, numerics, seed), field by field, and agrees
    with itself: its call count is its counts' call count, its verdict follows from its reasons, and a
    passing record's measured counts equal its predicted ones."""
    if not isinstance(record, dict) or "verdict" not in record:
        return False
    for name in ("claim", "params", "numerics", "seed"):
        if record.get(name) != fields.get(name):
            return False
    counts, predicted, reasons = record.get("counts"), record.get("predicted"), record.get("reasons")
    if not isinstance(counts, dict) or not isinstance(predicted, dict) or not isinstance(reasons, list):
        return False
    if record["verdict"] != ("pass" if not reasons else "fail"):
        return False
    if "calls" in record and record["calls"] != counts.get("calls"):
        return False
    if "predicted_calls" in record and record["predicted_calls"] != predicted.get("calls"):
        return False
    return record["verdict"] != "pass" or all(counts.get(k) == v for k, v in predicted.items())


def point_key(fields: dict[str, Any], source: str) -> str:
    """The cache key of a check: a hash of claim, parameters, numerics, seed and the source hash."""
    blob = json.dumps([fields["claim"], fields["params"], fields["numerics"], fields["seed"], source],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class Cache:
    """Records under ``root/<key[:2]>/<key>.json`` in envelopes of kind ``record``; ``set_aside`` lists the
    entries this cache renamed."""

    def __init__(self, root: Path | str):
        """A cache under ``root``; nothing is set aside yet."""
        self.root = Path(root)
        self.set_aside: list[Path] = []

    def path(self, key: str) -> Path:
        """Where the record of ``key`` lives."""
        return self.root / key[:2] / f"{key}.json"

    @staticmethod
    def question(key: str, fields: dict[str, Any], source: str) -> dict[str, Any]:
        """What the envelope's key holds: the point (after JSON, as records are), the code hash and the key."""
        return {"id": key, "point": normalise(fields), "source": source}

    def get(self, key: str, fields: dict[str, Any], source: str) -> dict[str, Any] | None:
        """The record stored for ``key`` if its entry verifies and answers ``fields``; None when absent or
        set aside."""
        path = self.path(key)
        before = len(SET_ASIDE)
        text = unseal(path, "record", self.question(key, fields, source), self.root)
        record = None
        if text is not None:
            try:
                record = loads(text)
            except ValueError:
                record = None
            if not record_consistent(record, normalise(fields)):
                record = None
                _set_aside_entry(path, self.root)
        self.set_aside += SET_ASIDE[before:]
        return record

    def put(self, key: str, fields: dict[str, Any], source: str, record: dict[str, Any]) -> None:
        """Store ``record`` (computed for ``fields``) under ``key`` in its envelope."""
        store(self.path(key), "record", self.question(key, fields, source), dumps(record), self.root)
