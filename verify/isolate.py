"""Run one piece of work in a forked child, so that an end the process cannot survive becomes one line.

Exact arithmetic allocates through GMP, which *aborts the process* (SIGABRT, "GNU MP: Cannot allocate
memory") when an allocation fails — under the address-space backstop of :mod:`attnsim.verify.limits` as much
as without it — so a broken variant whose numbers grow without bound would end ``attnsim teeth`` and the
report with it. :func:`in_child` runs the work in a fork under the same backstop as a check
(:func:`~attnsim.verify.limits.arm_backstop`) and the time limit in force, and turns a child that dies of a
signal, or runs past the time limit, into an :class:`Isolated` error with one line. Where there is no fork,
or other threads run in this process (a fork would copy their locks), the work runs here.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import tempfile
import threading
import time
from typing import Any, Callable

from attnsim.sim.errors import AttnsimError
from attnsim.verify.limits import arm_backstop, time_limit


class Isolated(AttnsimError):
    """The child ended without an answer: killed by a signal (GMP's abort) or past the time limit."""


def _last_line(f: Any) -> str:
    f.seek(0)
    lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def _child(fn: Callable[..., Any], args: tuple[Any, ...], w: int, err: Any) -> None:
    try:
        faulthandler.disable()  # an abort is the parent's one line, not a dump of every thread's stack
        os.dup2(err.fileno(), 2)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers a Ctrl-C and ends the child
        arm_backstop()
        try:
            payload = pickle.dumps(("ok", fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
            try:
                payload = pickle.dumps(("raise", exc))
            except Exception:  # noqa: BLE001 - an exception that cannot be pickled goes as its text
                payload = pickle.dumps(("raise", RuntimeError(f"{type(exc).__name__}: {exc}")))
        with os.fdopen(w, "wb") as f:
            f.write(payload)
    finally:
        os._exit(0)


def in_child(fn: Callable[..., Any], *args: Any, what: str = "the run") -> Any:
    """``fn(*args)`` computed in a forked child and handed back (an exception it raises is raised here);
    :class:`Isolated` when the child dies of a signal or runs past the time limit."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return fn(*args)
    limit = time_limit()
    with tempfile.TemporaryFile() as err:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child ends in os._exit
            os.close(r)
            _child(fn, args, w, err)
        os.close(w)
        chunks: list[bytes] = []
        deadline = None if limit is None else time.monotonic() + limit
        try:
            with os.fdopen(r, "rb", buffering=0) as f:
                while True:
                    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                    ready, _, _ = select.select([f], [], [], wait)
                    if not ready:
                        raise Isolated(f"{what} ran past the time limit of {limit:g} s (--max-time changes it)")
                    chunk = f.read(1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
        except BaseException:  # past the time limit, or interrupted: the child ends before this passes on
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            raise
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) or not chunks:
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            name = signal.Signals(sig).name if sig else f"exit {os.WEXITSTATUS(status)}"
            said = _last_line(err)
            raise Isolated(f"{what} ended the process ({name}{': ' + said if said else ''}); exact arithmetic "
                           "that outgrows the memory limit ends this way (--max-memory changes it)")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "raise":
        raise value
    return value
