"""The ``attnsim`` command line: one module per command, assembled in :mod:`.app`.

Nothing outside this package imports it (a contract in the test suite keeps it so). Loading it takes a moment
(``python -m`` and the installed script both load it first); a Ctrl-C meanwhile is one line too.
"""

from attnsim.verify.cli.interrupt import exit_interrupted

try:
    from attnsim.verify.cli.app import app, entry, main
except KeyboardInterrupt:
    exit_interrupted()

__all__ = ["app", "entry", "main"]
