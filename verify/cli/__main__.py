"""``python -m attnsim.verify.cli`` runs the command line (a Ctrl-C while it loads is one line too)."""

import sys

try:
    from attnsim.verify.cli.app import entry
except KeyboardInterrupt:
    print("interrupted", file=sys.stderr)
    sys.exit(130)

entry()
