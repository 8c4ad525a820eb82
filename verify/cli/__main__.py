"""``python -m attnsim.verify.cli`` runs the command line (the package's loading handles a Ctrl-C meanwhile)."""

from attnsim.verify.cli import entry

entry()
