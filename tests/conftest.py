"""Shared test set-up: hypothesis profiles (``ci`` is small and deterministic; select with
HYPOTHESIS_PROFILE, default ``ci``), and Ctrl-C restored where the shell that started the suite ignores it."""

import os
import signal

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Tests send SIGINT to the commands they start (and to this process). A shell that starts the suite in the
# background (``pytest &`` in a script: no job control) ignores SIGINT, and every child inherits that, so an
# interrupt would be lost and the test would wait for the whole command. Python's own handler is restored here
# (each xdist worker imports this file); a child started from here then gets SIGINT's default action.
try:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
except ValueError:  # not the main thread: leave it
    pass
