"""How the command line ends when the operating system refuses it: one line, never a traceback."""

from __future__ import annotations

import errno
import os
import sys
from typing import NoReturn


def quiet_stdout() -> None:
    """Point stdout at /dev/null: a full, closed or broken stdout cannot take more, and Python would
    complain again while flushing it at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _where(e: OSError) -> str:
    """The path an error concerns: its file name, the working folder when that is gone, else stdout."""
    if e.filename is not None:
        return str(e.filename)
    try:
        os.getcwd()
    except OSError:
        return "the working folder"
    return "stdout"


def fail_os(e: OSError) -> NoReturn:
    """Print one line naming the path (or the stream) that failed and exit 1; a reader that stopped reading
    (a broken pipe: ``attnsim bounds | head``) ends the command quietly with status 0."""
    quiet_stdout()
    if e.errno == errno.EPIPE and e.filename is None:
        os._exit(0)
    where = _where(e)
    why = e.strerror or errno.errorcode.get(e.errno or 0, type(e).__name__)
    try:
        print(f"error: {where}: {why}", file=sys.stderr)
    except OSError:
        pass
    os._exit(1)


def prepare_streams() -> None:
    """A closed stdout (``attnsim claims >&-``) ends the command with one line on stderr; text the output
    encoding cannot carry (``PYTHONIOENCODING=ascii``) is written as backslash escapes instead of failing."""
    if sys.stdout is None:
        if sys.stderr is not None:
            print("error: stdout: closed (nothing can be printed)", file=sys.stderr)
        os._exit(1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def check_argv(argv: list[str]) -> None:
    """Refuse, before click parses anything, what would silently turn into something else: an empty value
    (``--numerics ''`` would mean the default, ``--out ''`` the current folder) and digits outside 0-9
    (``int('６４')`` is 64)."""
    from attnsim.verify.registry import UsageError

    for i, arg in enumerate(argv):
        name = arg.partition("=")[0] if arg.startswith("--") else (argv[i - 1] if i and argv[i - 1].startswith("--")
                                                                   else "CLAIM")
        value = arg.partition("=")[2] if arg.startswith("--") and "=" in arg else arg
        if arg.startswith("--") and "=" not in arg:
            continue
        if not value.strip():
            raise UsageError(f"{name}: empty value")
        if any(ch.isdigit() and not ch.isascii() for ch in value):
            raise UsageError(f"{name}: {value!r} has digits outside 0-9")
