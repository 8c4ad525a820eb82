"""The fault catalogue's faults of a plain command that need a real process (docs/faults.md): a full or closed
stdout, a broken pipe, an unreachable scheduler, an interrupt or SIGTERM at any moment, of a check, of the proofs,
of a report, and one that lands in a finalizer. Each runs as a subprocess, bounded in time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_process import CLI, PROGRESS_LINE, one_line
from limits import limit


def test_stdout_full():
    with open("/dev/full", "w") as full:
        p = subprocess.run([*CLI, "claims"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=limit(120))
    assert p.returncode == 1 and "stdout" in one_line(p)


def test_closed_stdout_is_one_line():
    p = subprocess.run(["sh", "-c", 'exec "$0" -m attnsim.verify.cli claims >&-', sys.executable],
                       stderr=subprocess.PIPE, text=True, timeout=limit(120))
    assert p.returncode == 1 and "stdout: closed" in one_line(p)


def test_check_prints_tab_separated_lines_off_a_terminal():
    p = subprocess.run([*CLI, "check", "two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "resource\tmeasured\texact count" in p.stdout
    assert not set("│┃┏━─╭") & set(p.stdout), p.stdout


def test_broken_pipe_ends_quietly():
    """A reader that stops after 10 bytes of a 90 kB output (more than the pipe holds, so the writer meets the
    closed end): status 0 and nothing on stderr."""
    import fcntl

    proc = subprocess.Popen([*CLI, "claims", "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert fcntl.fcntl(proc.stdout.fileno(), fcntl.F_GETPIPE_SZ) < 80_000
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=limit(120)) == 0 and err == ""


def test_ascii_output_encoding_falls_back_to_escapes():
    # tint's bounds (the cheapest paper's) print dashes, section signs and superscripts
    p = subprocess.run([*CLI, "bounds", "--paper", "tint"], capture_output=True, timeout=limit(120),
                       env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert p.returncode == 0 and p.stderr == b"" and p.stdout.isascii() and len(p.stdout) > 100
    assert b"\\u2014" in p.stdout  # escaped, not dropped


def test_unreachable_scheduler_fails_fast(tmp_path: Path):
    start = time.monotonic()
    p = subprocess.run([*CLI, "run", "--N", "256", "--M", "64", "--scheduler", "tcp://127.0.0.1:1"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and "--scheduler" in one_line(p)
    # the command's own start-up (imports) comes on top of the 3 s budget of the connection
    assert time.monotonic() - start < 3 + 25


def test_interrupt_is_one_line(tmp_path: Path):
    proc = subprocess.Popen([*CLI, "check", "two_heads.lemma_3_1", "--N", "2048", "--M", "8", "--d", "4",
                             "--numerics", "exact", "--max-time", "2h"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, cwd=tmp_path)
    first = proc.stderr.readline()  # the first progress line: past start-up, the check is running (for minutes)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=limit(60))
    lines = [line for line in err.strip().splitlines() if not PROGRESS_LINE.match(line)]
    assert PROGRESS_LINE.match(first), first
    assert proc.returncode == 130 and lines == ["interrupted"] and "Traceback" not in err


def test_sigterm_is_one_line(tmp_path: Path):
    proc = subprocess.Popen([*CLI, "check", "two_heads.lemma_3_1", "--N", "2048", "--M", "8", "--d", "4",
                             "--numerics", "exact", "--max-time", "2h"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, cwd=tmp_path)
    first = proc.stderr.readline()
    proc.terminate()
    _, err = proc.communicate(timeout=limit(60))
    lines = [line for line in err.strip().splitlines() if not PROGRESS_LINE.match(line)]
    assert PROGRESS_LINE.match(first), first
    assert proc.returncode == 143 and lines == ["terminated"] and "Traceback" not in err


def test_interrupted_proofs_end_in_one_line(tmp_path: Path):
    """z3 takes SIGINT for itself while it solves unless told not to; a Ctrl-C during ``attnsim prove`` (the
    signal lands inside a solver call most of the time) must still end it: ``interrupted``, exit 130."""
    proc = subprocess.Popen([*CLI, "prove", "two_heads"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True, cwd=tmp_path)
    first = proc.stderr.readline()  # the first obligation's line: the solver is running now
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=limit(120))
    lines = [line for line in err.strip().splitlines()
             if not line.startswith("prove: ") and not PROGRESS_LINE.match(line)]
    assert first.startswith("prove: ") and proc.returncode == 130 and lines == ["interrupted"], err[-500:]


SWALLOWED_INTERRUPT = """
import os, signal, time
from attnsim.verify.cli.app import main


class Finalised:
    def __del__(self):  # as z3's terms and contexts free themselves: the Ctrl-C lands in here
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)


main(["claims", "--paper", "two_heads"], arm=Finalised)
"""


def test_an_interrupt_that_lands_in_a_finalizer_still_ends_the_command(tmp_path: Path):
    """Python drops an exception raised in a finalizer, KeyboardInterrupt too: a Ctrl-C that landed while z3
    freed an object was lost, and ``attnsim prove`` ran to the end with exit 0 (2 of 40 interrupts at random
    moments). The unraisable hook delivers such a signal again, and the command ends in ``interrupted``, 130."""
    p = subprocess.run([sys.executable, "-c", SWALLOWED_INTERRUPT], capture_output=True, text=True, cwd=tmp_path,
                       timeout=limit(120), preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 130 and lines[-1:] == ["interrupted"] and "Exception ignored" not in p.stderr, p.stderr


def test_a_sigterm_that_lands_in_a_finalizer_is_delivered_again():
    """The same for SIGTERM, which the command turns into an exception of its own: the hook sends it again."""
    import time
    from types import SimpleNamespace

    from attnsim.verify import signal_latch
    from attnsim.verify.cli.app import _unraisable_hook
    from attnsim.verify.cli.interrupt import Terminated

    class Arrived(Exception):
        pass

    def arrived(signum: int, frame: object) -> None:
        signal_latch.settle()  # as the command does once it ends by the signal: the hook stops sending it
        raise Arrived(signum)

    before = {sig: signal.signal(sig, arrived) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        hook = _unraisable_hook(lambda u: pytest.fail(f"reported instead of delivered: {u.exc_value!r}"))
        for exc, signum in ((KeyboardInterrupt(), signal.SIGINT), (Terminated(), signal.SIGTERM)):
            with pytest.raises(Arrived) as got:
                hook(SimpleNamespace(exc_value=exc, object=None))
                time.sleep(limit(10))
            assert got.value.args[0] == signum
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@pytest.mark.slow
@pytest.mark.parametrize("delay", [1.0, 3.0, 6.0])
def test_interrupted_report_ends_in_one_line_at_any_moment(delay: float, tmp_path: Path):
    """Ctrl-C of a report while it loads, sweeps or proves (z3 in a thread of the main process must not swallow
    it): ``interrupted`` and exit 130 every time. The child gets Ctrl-C armed even where this runs in the
    background (a shell starts background jobs with SIGINT ignored, and Python keeps it so)."""
    proc = subprocess.Popen([*CLI, "report", "--quick", "--out", "rep"], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, cwd=tmp_path,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=limit(120))
    lines = err.strip().splitlines()
    assert proc.returncode == 130 and lines[-1:] == ["interrupted"] and "Traceback" not in err, err[-500:]


SIGNAL_IN_AN_IMPORT = """
import sys
from attnsim.verify.cli.app import main
from attnsim.verify.cli.interrupt import Terminated


def land() -> None:  # as a C module's initialisation fails when a signal lands inside it
    raise ImportError("initialization failed") from {signal}()


main(["claims", "--paper", "two_heads"], arm=land)
"""


@pytest.mark.parametrize(("signal_name", "status", "line"),
                         [("KeyboardInterrupt", 130, "interrupted"), ("Terminated", 143, "terminated")])
def test_a_signal_that_fails_an_import_ends_as_that_signal(signal_name: str, status: int, line: str, tmp_path: Path):
    """A Ctrl-C that landed while matplotlib's ``ft2font`` initialised failed its import ("initialization
    failed", raised from the KeyboardInterrupt), and the report ended in exit 2, blaming the memory limit for
    being too small to load matplotlib. The import's failure is the signal: ``interrupted`` and 130 (SIGTERM:
    ``terminated`` and 143), with the backstop armed as the ``attnsim`` program arms it."""
    p = subprocess.run([sys.executable, "-c", SIGNAL_IN_AN_IMPORT.format(signal=signal_name)], capture_output=True,
                       text=True, cwd=tmp_path, timeout=limit(120), env={**os.environ, "ATTNSIM_BACKSTOP": "1"})
    assert p.returncode == status and p.stderr.strip().splitlines() == [line], p.stderr


SIGNAL_A_LIBRARY_SWALLOWS = """
import importlib
import signal

from attnsim.verify import check
from attnsim.verify.cli.interrupt import arm_signals

app = importlib.import_module("attnsim.verify.cli.app")
real = check.run_check


def optional_module() -> None:  # the signal lands while a C module initialises; its import fails from it
    try:
        signal.raise_signal(signal.{signal})
    except BaseException as e:
        raise ImportError("initialization failed") from e


def swallowing(*args, **kw):  # a library that falls back when an optional module does not load
    try:
        optional_module()
    except ImportError:
        pass
    return real(*args, **kw)


check.run_check = swallowing
arm_signals()
app.main(["check", "two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2"])
"""


@pytest.mark.parametrize(("signal_name", "status", "line"),
                         [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_a_signal_a_library_swallows_ends_the_command_at_its_next_step(signal_name: str, status: int, line: str,
                                                                       tmp_path: Path):
    """A library that imports an optional C module inside ``except ImportError`` swallows a Ctrl-C that lands
    while the module initialises, and the command would go on (one interrupted report went on working for
    200 s). The signal is raised again at the next progress step: the check, done after it, is not printed. (A
    progress line may come first on a loaded machine, where the check's start takes over 3 s.)"""
    p = subprocess.run([sys.executable, "-c", SIGNAL_A_LIBRARY_SWALLOWS.format(signal=signal_name)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=limit(120))
    said = [said for said in p.stderr.strip().splitlines() if not PROGRESS_LINE.match(said)]
    assert p.returncode == status and said == [line] and not p.stdout, (p.stdout, p.stderr)


SIGNAL_WHILE_THE_COMMAND_LINE_LOADS = """
import os
import signal
import sys
import time

import attnsim.verify.cli as cli


class Landing:  # the signal lands while the command line loads, as the program starts
    def find_spec(self, name, path=None, target=None):
        if name == "attnsim.verify.cli.app":
            try:
                os.kill(os.getpid(), signal.{signal})
                time.sleep(30)
            except BaseException as e:
                if {wrapped}:  # as Python wraps what a class's __set_name__ raised (numpy's finfo, say)
                    raise RuntimeError("Error calling __set_name__") from e
                raise
        return None


sys.meta_path.insert(0, Landing())
sys.argv = ["attnsim", "claims", "--paper", "two_heads"]
cli.entry()
"""


@pytest.mark.parametrize(("signal_name", "wrapped", "status", "line"),
                         [("SIGINT", False, 130, "interrupted"), ("SIGTERM", False, 143, "terminated"),
                          ("SIGINT", True, 130, "interrupted")])
def test_a_signal_while_the_command_line_loads_is_one_line(signal_name: str, wrapped: bool, status: int, line: str,
                                                           tmp_path: Path):
    """Loading the command line takes about half a second. Its handlers were set only once it had loaded, and 4
    of 40 SIGTERMs of a loaded report, sent within 0.47 s of its start, ended it by the default action: no line.
    The program now sets them first. A Ctrl-C that numpy's loading turned into a RuntimeError (1 of 40 Ctrl-Cs
    within the first second) ended in a traceback: it is the signal too."""
    script = SIGNAL_WHILE_THE_COMMAND_LINE_LOADS.format(signal=signal_name, wrapped=wrapped)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                       timeout=limit(120))
    assert p.returncode == status and p.stderr.strip().splitlines() == [line] and not p.stdout, (p.stdout, p.stderr)


SIGNAL_WHILE_CLICK_LOADS = """
import importlib

app = importlib.import_module("attnsim.verify.cli.app")


def land():  # the command line's first step loads click: a Ctrl-C landed there, before any handler
    raise KeyboardInterrupt


app._click_exception_types = land
app.main(["claims", "--paper", "two_heads"])
"""


def test_a_ctrl_c_while_click_loads_is_one_line(tmp_path: Path):
    """1 of 100 interrupts at random moments of a loaded report's first seconds landed while the command line
    loaded click, outside its handlers, and ended in a traceback and status -2."""
    p = subprocess.run([sys.executable, "-c", SIGNAL_WHILE_CLICK_LOADS], capture_output=True, text=True,
                       cwd=tmp_path, timeout=limit(120))
    assert p.returncode == 130 and p.stderr.strip().splitlines() == ["interrupted"], p.stderr
