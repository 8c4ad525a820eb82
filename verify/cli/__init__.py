"""The ``attnsim`` command line: one module per command, assembled in :mod:`.app`.

Nothing outside this package imports it (a contract in the test suite keeps it so).
"""

from attnsim.verify.cli.app import app, entry, main

__all__ = ["app", "entry", "main"]
