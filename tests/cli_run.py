"""``attnsim ARGS`` run in the test's own process, through its real entry point (``main``: the one-line
error handling and exit statuses included), with both file descriptors captured (``capfd``), so that a
line written to the real stderr by any library is seen too. Tests about processes (signals, closed
streams, workers) start real ones instead."""

from __future__ import annotations

import pytest


def invoke(args: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``attnsim ARGS``."""
    from attnsim.verify.cli.app import main

    capfd.readouterr()  # what came before is not this command's
    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out = capfd.readouterr()
    return code, out.out, out.err
