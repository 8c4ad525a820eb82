"""``python -m attnsim.verify.cli`` runs the command line."""

from attnsim.verify.cli.app import entry

entry()
