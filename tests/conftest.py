"""Shared test set-up: hypothesis profiles (``ci`` is small and deterministic; select with
HYPOTHESIS_PROFILE, default ``ci``), Ctrl-C restored where the shell that started the suite ignores it, the
process's memory and time limits put back after every test, the run's own theory store, Python's bytecode cache
written, and the reduced report's serial run shared by the tests that read it."""

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from shared_once import once
from small_report import serial_report_in

from attnsim.theory.store import STORE_ENV
from attnsim.verify import limits

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


# Python keeps compiled modules in __pycache__ folders unless PYTHONDONTWRITEBYTECODE is set, as it is on the
# machines whose figures the README gives. Then every process the suite starts (its workers, the commands its tests
# run, their pool and Dask workers) compiled the package's modules again, and every worker rewrote the test files'
# assertions again: a small `attnsim check` took 2.14 to 2.78 CPU s without the cache against 1.78 to 1.94 with it,
# and the whole suite about 50 CPU s more in one run of each. The suite's processes write the cache (the checkout's
# __pycache__ folders, which git ignores).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


_LIMIT_ENV = ("ATTNSIM_MAX_MEMORY", "ATTNSIM_MAX_TIME")


@pytest.fixture(autouse=True)
def _limits_put_back():
    """A command run in this process (click's CliRunner) sets the process's limits from --max-memory and
    --max-time, and their environment variables for the workers it starts; a test that ran ``--max-memory 1M``
    would otherwise refuse every later check in the same xdist worker ("the limit is 1.0 MiB")."""
    saved = (limits._limit, limits._time_limit, {k: os.environ.get(k) for k in _LIMIT_ENV})
    yield
    limits._limit, limits._time_limit = saved[0], saved[1]
    for key, value in saved[2].items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


_STORE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Every run derives the theories afresh into a store of its own (attnsim.theory.store), which its xdist
    workers and the commands its tests start share (they inherit the variable): no theory stored by an earlier run,
    or by the user's commands, is read. A store named in the environment already is kept."""
    if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(STORE_ENV):
        return
    os.environ[STORE_ENV] = config.stash[_STORE] = tempfile.mkdtemp(prefix="attnsim-theory-")


def pytest_unconfigure(config: pytest.Config) -> None:
    made = config.stash.get(_STORE, None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(STORE_ENV, None)


WORKERS_PER_CORE = 3

if os.environ.get("PYTEST_XDIST_WORKER"):
    # The workers fill the cores themselves (as the report's pool workers do, attnsim.verify.procs.pool_worker):
    # a BLAS or torch thread pool in each would spin beside the others. tint.under_2b's effective count took
    # 13.1 CPU s on two BLAS threads and 10.0 on one. The BLAS already loaded is held to one thread here; torch,
    # imported later, and the commands the tests start read the variables (a user's own setting is kept).
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the default in pyproject): three workers per core this process may use. Many tests wait on the
    processes they start (reports, signals, Dask clusters); with one worker per core their waits left the cores
    idle, and on a machine busy with two other CPU-bound jobs the suite took 14 min on 2 cores (11.5 min with two
    workers per core; under 10 is the budget)."""
    return WORKERS_PER_CORE * len(os.sched_getaffinity(0))


@pytest.fixture(scope="module")
def serial_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a fresh serial run of the reduced quick report (tests/small_report.py; ``--out rep``) and what
    it printed (``stdout.txt``, ``stderr.txt``): built once for the run, whichever xdist workers its tests land
    on; they only read it."""
    return once(tmp_path_factory, "serial-report", serial_report_in)
