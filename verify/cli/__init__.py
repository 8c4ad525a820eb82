"""The ``attnsim`` command line: one module per command, assembled in :mod:`.app`.

Nothing outside this package imports it (a contract in the test suite keeps it so). Loading the command line
takes about half a second, so the package itself loads only :mod:`.interrupt`: :func:`entry` (the installed
script and ``python -m``) sets the program's signal handlers first, and a Ctrl-C or SIGTERM while the rest
loads is one line too.
"""

from attnsim.verify.cli.interrupt import (
    Terminated,
    arm_signals,
    exit_interrupted,
    exit_terminated,
    signal_inside,
)


def entry() -> None:
    """The ``attnsim`` program: the signal handlers, then the command line (:func:`.app.entry`)."""
    arm_signals()
    try:
        from attnsim.verify.cli.app import entry as program
    except BaseException as e:  # the signal itself, or what a module's loading made of it (signal_inside)
        signalled = signal_inside(e)
        if signalled is KeyboardInterrupt:
            exit_interrupted()
        if signalled is Terminated:
            exit_terminated()
        raise
    program()


__all__ = ["entry"]
