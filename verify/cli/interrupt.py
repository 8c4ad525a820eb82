"""A Ctrl-C ends the command with one line, ``interrupted``, and exit status 130, and a SIGTERM with
``terminated`` and 143 — wherever they land. The handlers are set first of all (:func:`arm_signals`, before the
command line loads) and latch their signal (:mod:`attnsim.verify.signal_latch`).

Python 3.11 remembers a ``KeyboardInterrupt`` that passed through code a C library ran with ``PyRun_*`` even
after the command caught it, and then ends the process by SIGINT itself (status -2) instead of the 130 the
command chose. The exit hook registered here, when this package loads (before the libraries register theirs,
so it runs after them), keeps the chosen status: once every other exit hook has run, an interrupted command
leaves with 130.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn

from attnsim.verify.signal_latch import latch, settle

INTERRUPTED_EXIT = 130
TERMINATED_EXIT = 143
_interrupted: list[bool] = []


def mark_interrupted() -> None:
    """Say ``interrupted`` and have the process end with status 130 (once its exit hooks have run)."""
    settle()
    if not _interrupted:
        print("interrupted", file=sys.stderr)
        _interrupted.append(True)


def exit_interrupted() -> NoReturn:
    """:func:`mark_interrupted`, then leave."""
    mark_interrupted()
    sys.exit(INTERRUPTED_EXIT)


def exit_terminated() -> NoReturn:
    """Say ``terminated`` and leave with status 143."""
    settle()
    print("terminated", file=sys.stderr)
    sys.exit(TERMINATED_EXIT)


class Terminated(BaseException):
    """SIGTERM, raised where the command is so that it ends as an interrupt does (exit 143)."""


def _terminate(signum: int, frame: object) -> None:
    latch(signum)
    raise Terminated()


def _interrupt(signum: int, frame: object) -> None:
    latch(signum)
    raise KeyboardInterrupt


def arm_signals() -> None:
    """The program's handlers: SIGTERM raises :class:`Terminated`; SIGINT raises ``KeyboardInterrupt`` as
    Python's own handler does, unless the program was started with Ctrl-C ignored (a shell's background job).
    Both latch their signal first, so that one a library swallows is raised again at the next progress step."""
    import signal

    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)


def signal_inside(e: BaseException) -> type[BaseException] | None:
    """``KeyboardInterrupt`` or :class:`Terminated` where a library wrapped one in ``e``, else None.

    ctypes raises ``ArgumentError: argument 1: KeyboardInterrupt`` when a Ctrl-C lands while it converts a
    call's arguments (z3's calls, say); a signal that lands while an extension module initialises (matplotlib's
    ``ft2font``, say) fails its import with ``ImportError: initialization failed``, and one that lands while a
    class is built (numpy's ``finfo`` as numpy loads) with ``RuntimeError: Error calling __set_name__``, both
    raised from the signal's exception. Each is the signal, not a fault of the command or a memory limit too small
    for the library."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, (KeyboardInterrupt, Terminated)):
            return type(e)
        if type(e).__name__ == "ArgumentError" and "KeyboardInterrupt" in str(e):
            return KeyboardInterrupt
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
    return None


def _keep_status() -> None:
    if not _interrupted:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or full stream: nothing more to say
            pass
    os._exit(INTERRUPTED_EXIT)


atexit.register(_keep_status)
