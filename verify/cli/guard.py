"""How the command line ends when the operating system refuses it: one line, never a traceback."""

from __future__ import annotations

import errno
import os
import sys
from typing import NoReturn


def fail_os(e: OSError) -> NoReturn:
    """Print one line naming the path (or the stream) that failed and exit 1.

    A full or closed stdout cannot take the message, and Python would complain again while flushing
    it at exit, so stdout is pointed at /dev/null first.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    where = e.filename if e.filename is not None else "stdout"
    why = e.strerror or errno.errorcode.get(e.errno or 0, type(e).__name__)
    try:
        print(f"error: {where}: {why}", file=sys.stderr)
    except OSError:
        pass
    os._exit(1)


def check_argv(argv: list[str]) -> None:
    """Refuse, before click parses anything, what would silently turn into something else: an empty value
    (``--numerics ''`` would mean the default, ``--out ''`` the current folder) and digits outside 0-9
    (``int('６４')`` is 64)."""
    from attnsim.verify.registry import UsageError

    for i, arg in enumerate(argv):
        name = arg.partition("=")[0] if arg.startswith("--") else (argv[i - 1] if i and argv[i - 1].startswith("--")
                                                                   else "argument")
        value = arg.partition("=")[2] if arg.startswith("--") and "=" in arg else arg
        if arg.startswith("--") and "=" not in arg:
            continue
        if not value.strip():
            raise UsageError(f"{name}: empty value")
        if any(ch.isdigit() and not ch.isascii() for ch in value):
            raise UsageError(f"{name}: {value!r} has digits outside 0-9")
