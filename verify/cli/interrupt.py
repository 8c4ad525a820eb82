"""A Ctrl-C ends the command with one line, ``interrupted``, and exit status 130 — wherever it lands.

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

from attnsim.verify.signal_latch import settle

INTERRUPTED_EXIT = 130
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
