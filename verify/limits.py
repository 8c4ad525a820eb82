"""The limits a run is held to: memory (``--max-memory``) and time (``--max-time``), and the backstop.

Estimates (``verify.cost``) are compared with these limits before any work. The memory limit is a share
of the memory available when the command starts, ``--max-memory`` or ``$ATTNSIM_MAX_MEMORY``; the time
limit is ``--max-time`` or ``$ATTNSIM_MAX_TIME`` (``attnsim check`` defaults to :data:`CHECK_SECONDS`;
sweeps run their known grids without one). As a backstop for an estimate that misses, every command
runs under an address-space limit (``RLIMIT_AS``) of its start-up size plus the memory limit, so an
allocation past it fails as a ``MemoryError`` — one line, never the machine's memory — instead of
growing until the kernel or GMP ends the process.
"""

from __future__ import annotations

import math
import os
import re
import resource
from dataclasses import dataclass

from attnsim.sim.numerics.memory_room import available_memory, virtual_size
from attnsim.verify.registry import UsageError

MEMORY_SHARE = 0.5
"""Default limit: this share of the memory available when the command starts."""

CHECK_SECONDS = 600.0
"""Default ``--max-time`` of ``attnsim check``: ten minutes."""

_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:i?B)?$", re.IGNORECASE)
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_DURATION = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*(s|min|h|d)?$", re.IGNORECASE)
_SECONDS = {"": 1, "s": 1, "min": 60, "h": 3600, "d": 86400}

_limit: int | None = None
_time_limit: float | None = None


def parse_size(text: str, option: str = "--max-memory") -> int:
    """``"512M"``, ``"4G"``, ``"1.5GiB"``, ``"1000000"`` (bytes) or ``"25%"`` (of available memory)."""
    t = text.strip()
    if not t.isascii() or not t:
        raise UsageError(f"{option}: expected a size such as 4G, 512M or 25%, got {text!r}")
    if t.endswith("%"):
        try:
            share = float(t[:-1])
        except ValueError:
            share = math.nan
        if not 0 < share <= 100:
            raise UsageError(f"{option}: a share must lie in (0, 100]%, got {text!r}")
        return int(available_memory() * share / 100)
    m = _SIZE.match(t)
    if not m:
        raise UsageError(f"{option}: expected a size such as 4G, 512M or 25%, got {text!r}")
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if size < 1 << 20:
        raise UsageError(f"{option}: at least 1M, got {text!r}")
    if size > 1 << 50:
        raise UsageError(f"{option}: at most 1024T, got {text!r}")
    return size


def parse_duration(text: str, option: str = "--max-time") -> float:
    """``"600"`` or ``"600s"``, ``"10min"``, ``"2h"``, ``"1d"``: seconds, at least 1 and at most 30 days."""
    m = _DURATION.match(text.strip()) if text.isascii() else None
    if not m:
        raise UsageError(f"{option}: expected a duration such as 600, 10min or 2h, got {text!r}")
    seconds = float(m.group(1)) * _SECONDS[(m.group(2) or "").lower()]
    if not 1 <= seconds <= 30 * 86400:
        raise UsageError(f"{option}: must lie between 1 s and 30 days, got {text!r}")
    return seconds


def set_memory_limit(text: str | None) -> None:
    """Set the limit for this process from ``--max-memory`` (None: the default share) and arm the backstop."""
    global _limit
    _limit = None if text is None else parse_size(text)
    if text is not None:
        os.environ["ATTNSIM_MAX_MEMORY"] = text  # worker processes started later inherit it
    arm_backstop()


def memory_limit() -> int:
    """The limit in force: ``--max-memory``, else ``$ATTNSIM_MAX_MEMORY``, else a share of available memory."""
    if _limit is not None:
        return _limit
    env = os.environ.get("ATTNSIM_MAX_MEMORY")
    if env:
        return parse_size(env, "ATTNSIM_MAX_MEMORY")
    return int(available_memory() * MEMORY_SHARE)


def set_time_limit(text: str | None, default: float | None = None) -> None:
    """Set the time limit of this process from ``--max-time`` (None: ``$ATTNSIM_MAX_TIME``, else ``default``;
    None again: no limit). A malformed value of either is refused now, naming where it came from."""
    global _time_limit
    env = os.environ.get("ATTNSIM_MAX_TIME")
    if text is not None:
        _time_limit = parse_duration(text)
    elif env:
        _time_limit = parse_duration(env, "ATTNSIM_MAX_TIME")
    else:
        _time_limit = default


def time_limit() -> float | None:
    """The time limit in force (seconds): ``--max-time``, else ``$ATTNSIM_MAX_TIME``, else none."""
    if _time_limit is not None:
        return _time_limit
    env = os.environ.get("ATTNSIM_MAX_TIME")
    return parse_duration(env, "ATTNSIM_MAX_TIME") if env else None


BACKSTOP_ENV = "ATTNSIM_BACKSTOP"
"""Set to 1 by the ``attnsim`` entry point (and inherited by its workers): only real commands arm the
backstop, so a test that calls the CLI in its own process keeps its address space."""


def arm_backstop() -> None:
    """Limit this process's address space (and its children's) to its present size plus the memory limit.

    Armed when a command starts, again when ``--max-memory`` is read and when a check starts its work (the
    limit follows the imports done by then). Does nothing unless :data:`BACKSTOP_ENV` is set, or where
    the platform has no ``RLIMIT_AS``; the estimates stand alone there.
    """
    limit = memory_limit()  # a malformed $ATTNSIM_MAX_MEMORY is refused here, armed or not
    if os.environ.get(BACKSTOP_ENV) != "1":
        return
    want = virtual_size() + limit
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError, AttributeError):
        pass


def failed_import(exc: BaseException) -> bool:
    """Whether ``exc`` is a library that failed to load under the armed backstop: an ``ImportError``, or the
    ``SystemError`` that CPython raises instead when an allocation fails inside a C step of an import
    ("error return without exception set", met in sympy's import under a 1 MiB limit): raised in the import
    machinery or in an installed library's module body."""
    if isinstance(exc, ImportError):
        return True
    if not isinstance(exc, SystemError) or os.environ.get(BACKSTOP_ENV) != "1":
        return False
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith("<frozen importlib.") or code.co_name == "<module>" and _library_of(
                code.co_filename):
            return True
        tb = tb.tb_next
    return False


_NULL_WITHOUT_EXCEPTION = ("without setting an exception", "without exception set")
"""CPython's words when a C step failed but no exception could be set (its two spellings)."""


def failed_allocation(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation refused by the armed backstop so early that CPython could not even build
    the ``MemoryError``: the ``SystemError`` it raises instead ("... returned NULL without setting an
    exception"), met outside any import under a 1 MiB limit (in the CLI library's own call of a command). Any
    other ``SystemError`` is a real fault."""
    return (isinstance(exc, SystemError) and os.environ.get(BACKSTOP_ENV) == "1"
            and any(words in str(exc) for words in _NULL_WITHOUT_EXCEPTION))


def import_failure(exc: BaseException) -> str:
    """The one line of a library that could not be loaded (see :func:`failed_import`): under the armed
    backstop, the memory limit is too small to map it (numpy's extension modules alone map tens of MiB), and
    the line names where it came from."""
    what = getattr(exc, "name", None) or _loading_library(exc) or "a library"
    if os.environ.get(BACKSTOP_ENV) == "1":
        source = "--max-memory" if _limit is not None else "ATTNSIM_MAX_MEMORY" if os.environ.get(
            "ATTNSIM_MAX_MEMORY") else "the default memory limit"
        return (f"{source}: {human(memory_limit())} is too little to load {what} (its shared objects could not be "
                f"mapped under the address-space limit); raise it, to 1G say")
    return f"cannot load {what}: " + " ".join(str(exc).split())[:200]


def _loading_library(exc: BaseException) -> str | None:
    """The top-level package of the innermost installed module that was executing when ``exc`` was raised."""
    name = None
    tb = exc.__traceback__
    while tb is not None:
        name = _library_of(tb.tb_frame.f_code.co_filename) or name
        tb = tb.tb_next
    return name


def _library_of(filename: str) -> str | None:
    """The top-level package of an installed file (``.../site-packages/sympy/core/symbol.py``: ``sympy``)."""
    parts = filename.replace(os.sep, "/").split("/site-packages/", 1)
    return parts[1].split("/", 1)[0] if len(parts) == 2 and "/" in parts[1] else None


def out_of_memory() -> str:
    """The one line of an allocation refused by the backstop (an estimate that missed)."""
    return (f"error: this run needs more than --max-memory ({human(memory_limit())}); its estimate missed, "
            "so it was stopped at the limit (--max-memory raises it)")


def human(n: float) -> str:
    """Bytes as a short human-readable size (powers of ten beyond a thousand PiB)."""
    if n >= 1000 * 2 ** 50:
        return f"{n:.1e} bytes"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def human_time(s: float) -> str:
    """Seconds as a short duration (years beyond a year, powers of ten beyond a million years)."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if s >= size:
            v = s / size
            return f"{v:.1e} {unit}" if v >= 1e6 else f"{v:.1f} {unit}"
    return f"{s:.1f} s"


@dataclass(frozen=True)
class Estimate:
    """What a run will need: ``bytes`` in all (and ``seconds`` where estimated), the parameter that drives
    it (named in a refusal) and the sizes it was estimated from."""

    bytes: float
    driver: str
    detail: str
    seconds: float | None = None
    time_driver: str | None = None


def require_memory(est: Estimate, limit: int | None = None) -> None:
    """Refuse ``est`` with one line naming its driving parameter when it exceeds a limit (memory, then time)."""
    limit = memory_limit() if limit is None else limit
    if est.bytes > limit:
        raise UsageError(f"{est.driver}: this run would need about {human(est.bytes)} ({est.detail}); the limit is "
                         f"{human(limit)} (--max-memory changes it)")
    seconds = time_limit()
    if est.seconds is not None and seconds is not None and est.seconds > seconds:
        raise UsageError(f"{est.time_driver or est.driver}: this run would take about {human_time(est.seconds)} "
                         f"({est.detail}); the limit is {human_time(seconds)} (--max-time changes it)")
