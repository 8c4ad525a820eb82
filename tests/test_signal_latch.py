"""The latch that raises a swallowed Ctrl-C or SIGTERM again at the next progress step (verify/signal_latch.py)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from attnsim.verify import signal_latch


def test_a_lost_signal_is_raised_again_in_the_main_thread_only():
    signal_latch.latch(signal.SIGINT)
    try:
        elsewhere: list[BaseException] = []

        def step() -> None:
            try:
                signal_latch.act_on_lost()
            except BaseException as e:  # noqa: BLE001 - what the thread met, read below
                elsewhere.append(e)

        t = threading.Thread(target=step)
        t.start()
        t.join()
        assert not elsewhere and signal_latch.pending() == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            signal_latch.act_on_lost()
    finally:
        signal_latch.settle()


def test_a_settled_signal_is_not_raised_again():
    signal_latch.latch(signal.SIGINT)
    signal_latch.settle()
    signal_latch.act_on_lost()
    assert signal_latch.pending() is None


def test_a_forked_worker_inherits_no_signal():
    """A worker forked after a signal came was sent nothing: the signal stays the parent's."""
    signal_latch.latch(signal.SIGTERM)
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, b"clear" if signal_latch.pending() is None else b"held")
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(r, 5) == b"clear" and signal_latch.pending() == signal.SIGTERM
    finally:
        signal_latch.settle()
