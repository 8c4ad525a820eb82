"""A Ctrl-C or SIGTERM sent to the command, remembered until the command ends by it.

The command's handlers raise the signal's exception where the main thread is (``KeyboardInterrupt``, or the
command line's own for SIGTERM), and that is almost always the end of it. A library can still swallow it: one
that imports an optional C module inside ``try: ... except ImportError:`` loses a Ctrl-C that lands while the
module initialises, since the failed initialisation raises ``ImportError`` from the ``KeyboardInterrupt``; the
library falls back and the command goes on as if nothing had come. So the handlers :func:`latch` the signal,
the command :func:`settle`\\ s it when it ends by it, and every progress step (a finished check, sweep point or
report job, in the main thread) calls :func:`act_on_lost`: a signal latched and not settled there was lost
(its exception would have left that loop), and it is raised again, through its own handler.
"""

from __future__ import annotations

import os
import signal
import threading

_pending: list[int] = []


def latch(signum: int) -> None:
    """Remember that ``signum`` came (the command's handler calls this before raising its exception)."""
    _pending[:] = [signum]


def settle() -> None:
    """The command is ending by the signal it latched: nothing is lost any more."""
    _pending.clear()


os.register_at_fork(after_in_child=settle)  # a forked worker was sent nothing: the signal is the parent's


def pending() -> int | None:
    """The signal latched and not yet settled, if any."""
    return _pending[0] if _pending else None


REDELIVERY_WAITS = (0.05, 0.25, 1.0, 2.0)
"""Seconds :func:`deliver_until_settled` waits before each delivery: the first lands once the main thread has
left the finalizer that swallowed the signal; the later ones cover a delivery that landed in a finalizer, or in
the hook that called it, once more (seen under load, 1 in 15 runs with a single delivery)."""


def deliver_until_settled(signum: int) -> None:
    """Latch ``signum`` and send it to this process again, from a thread of its own, after each of
    :data:`REDELIVERY_WAITS` while it stays latched: its handler raises where the command runs, and the command
    settles it as it ends by it. For a signal that a finalizer swallowed (Python drops what one raises), where no
    progress step may come. The thread is started without waiting for it to run: ``threading.Thread.start`` waits,
    and a delivery that landed in that wait, inside the caller, would be swallowed too."""
    import _thread
    import time

    latch(signum)

    def deliver() -> None:
        for wait in REDELIVERY_WAITS:
            time.sleep(wait)
            if pending() != signum:
                return
            os.kill(os.getpid(), signum)

    _thread.start_new_thread(deliver, ())


def act_on_lost() -> None:
    """Raise a latched, unsettled signal again, through its handler, where this is called in the main thread.

    Call it where work goes on only if no signal came: a progress step. Elsewhere (another thread, or no
    signal latched) it does nothing."""
    signum = pending()
    if signum is None or threading.current_thread() is not threading.main_thread():
        return
    signal.raise_signal(signum)
