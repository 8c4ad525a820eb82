"""The fault catalogue's faults of a report and of Dask that need a real process (docs/faults.md): tampered caches
under a real report, an interrupt or a kill of a local Dask report or run, a Dask scheduler and worker on
127.0.0.1 that lose a worker, and what a stopped client leaves behind. Each runs as a subprocess, bounded in time,
and cleans up after itself."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from cli_process import CLI, PROGRESS_LINE
from limits import limit
from small_report import SMALL_REPORT, small_report

from attnsim.verify.registry import RESUMABLE_EXIT

PROGRESS = re.compile(r"^([a-z ]+(\(.*\))?: \d+/\d+ \(\d+%\)|phase .+: [\d.]+ s \(CPU [\d.]+ s\)$)")


@pytest.mark.slow
def test_bad_cache_entries_are_set_aside(serial_report: Path, tmp_path: Path):
    """A record copied over another's file, ``{}``, non-UTF-8 bytes and a truncated file are set aside and
    recomputed: the rerun's checks.csv equals the fresh run's, and the report counts them."""
    shutil.copytree(serial_report / "rep", tmp_path / "rep")
    entries = sorted((tmp_path / "rep" / ".cache").rglob("*.json"))
    assert len(entries) >= 5
    entries[1].write_bytes(entries[0].read_bytes())
    entries[2].write_text("{}")
    entries[3].write_bytes(b"\xff\xfe not utf-8")
    entries[4].write_bytes(entries[4].read_bytes()[:40])
    again = small_report("--out", "rep", "--scheduler", "serial", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "rep" / "checks.csv").read_text() == (serial_report / "rep" / "checks.csv").read_text()
    assert len(list((tmp_path / "rep" / ".cache").rglob("*.bad"))) == 4
    assert "4 cache entries set aside" in again.stdout
    # report.md counts the check records set aside (the other entries are section and teeth caches)
    assert re.search(r"[1-4] cache entries did not verify", (tmp_path / "rep" / "report.md").read_text())


def _workers(parent: psutil.Process) -> set[int]:
    """The worker processes under ``parent`` (not multiprocessing's resource tracker)."""
    try:
        return {c.pid for c in parent.children(recursive=True) if "resource_tracker" not in " ".join(c.cmdline())}
    except psutil.Error:  # a child that ended while it was looked at: ask again
        return set()


def _await_moment(parent: psutil.Process, moment: str) -> None:
    """Wait for ``moment``: ``start`` is the instant the first workers appear (their cluster is starting:
    forked, its client not yet connected), ``sweep`` is 3 s into the first cluster's work, ``later start``
    is the instant the workers of a later cluster appear, once the first cluster's workers are gone."""
    deadline = time.monotonic() + limit(60)
    first: set[int] = set()
    while time.monotonic() < deadline and not first:
        first = _workers(parent)
        time.sleep(0.05)
    assert first, "the cluster never started"
    if moment == "start":
        return
    if moment == "sweep":
        time.sleep(3)
        return
    while time.monotonic() < deadline:
        now = _workers(parent)
        if now and not now & first:
            return
        time.sleep(0.02)
    raise AssertionError("no later cluster started")


_SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
_STOPPED = {"SIGINT": (130, ["interrupted"]), "SIGTERM": (143, ["terminated"]), "SIGKILL": (-9, [])}


def _stop_at(cmd: list[str], how: str, moment: str, cwd: Path) -> tuple[int, list[str], str]:
    """Run ``cmd`` in a session of its own, send ``how`` (``SIGINT-to-the-group``: to every process of the
    session, as a terminal's Ctrl-C does) at ``moment``; its exit status, its stderr lines besides progress,
    and the whole stderr (its workers' included) once every worker is gone.

    Its stderr goes to a file, not a pipe, so that the wait is for the command itself (a worker that outlives it
    would hold a pipe open and look like a command that never ended: that is the check on ``alive`` below). A
    command still running long after the signal is sent SIGABRT, whose fault handler writes every thread's
    stack to that stderr, and the failure shows it."""
    err_path = cwd / "stderr.txt"
    with open(err_path, "w") as err_file:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err_file, text=True,
                                start_new_session=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    parent = psutil.Process(proc.pid)
    seen: list[psutil.Process] = []
    try:
        try:
            _await_moment(parent, moment)
        except AssertionError as exc:  # say how the report ended, or what it said while no cluster came
            running = proc.poll() is None
            if running:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError(f"{exc} ({'still running' if running else f'exit {proc.returncode}'}); "
                                 f"its stderr ends: {err_path.read_text()[-2000:]!r}") from None
        seen = parent.children(recursive=True)
        signum = _SIGNALS[how.split("-")[0]]
        if how.endswith("group"):
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        try:
            proc.wait(timeout=limit(120))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            raise AssertionError(f"still running {limit(120):.0f} s after {how}; its stderr, with its threads' "
                                 f"stacks at SIGABRT: {err_path.read_text()[-6000:]}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    _, alive = psutil.wait_procs(seen, timeout=10)
    for p in alive:
        p.kill()
    assert not alive, f"workers outlived their parent: {[p.pid for p in alive]}"
    err = err_path.read_text()
    return proc.returncode, [line for line in err.strip().splitlines() if not PROGRESS_LINE.match(line)], err


@pytest.mark.slow
@pytest.mark.parametrize(("how", "moment"), [("SIGINT", "sweep"), ("SIGINT", "later start"),
                                             ("SIGINT-to-the-group", "sweep"), ("SIGINT-to-the-group", "later start"),
                                             ("SIGTERM", "later start"), ("SIGKILL", "sweep")])
def test_local_dask_report_stops_in_one_line(tmp_path: Path, how: str, moment: str):
    """A report on an embedded Dask cluster stopped in the middle of its sweep, or while a later cluster (the
    broken variants') starts: one line (none for SIGKILL) and exit 130 or 143, nothing from distributed's
    workers or nannies, no worker left. A signal that lands while workers are forked is held, not lost."""
    program = SMALL_REPORT.replace("from attnsim.verify.cli.app import main", "from attnsim.verify.cli import entry")
    assert program != SMALL_REPORT  # the reduced report runs as the program does: its signal handlers first
    cmd = [sys.executable, "-c", program.replace("main()", "entry()"), "--out", "rep", "--scheduler", "local",
           "--workers", "2"]
    rc, said, err = _stop_at(cmd, how, moment, tmp_path)
    assert (rc, said) == _STOPPED[how.split("-")[0]], err


@pytest.mark.slow
@pytest.mark.parametrize(("how", "moment"), [("SIGINT-to-the-group", "sweep"), ("SIGTERM", "start"),
                                             ("SIGKILL", "sweep")])
def test_local_dask_run_stops_in_one_line(tmp_path: Path, how: str, moment: str):
    """``attnsim run --scheduler local`` stopped while its cluster starts or works: one line (none for
    SIGKILL: the workers of a killed parent end without a CommClosedError of their own), exit 130 or 143."""
    cmd = [*CLI, "run", "--N", "16384", "--M", "128", "--scheduler", "local", "--workers", "2"]
    rc, said, err = _stop_at(cmd, how, moment, tmp_path)
    assert (rc, said) == _STOPPED[how.split("-")[0]] and "Traceback" not in err, err


@pytest.mark.slow
def test_killed_report_leaves_no_workers(tmp_path: Path):
    """SIGKILL of a report on the processes executor in the middle of its sweep: its pool workers die with it."""
    proc = subprocess.Popen([sys.executable, "-c", SMALL_REPORT, "--out", "rep", "--workers", "2"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(parent.children()) < 2:
        time.sleep(0.2)
    workers = parent.children(recursive=True)
    assert workers, "the pool never started"
    time.sleep(1)
    proc.kill()
    proc.wait(timeout=10)
    gone, alive = psutil.wait_procs(workers, timeout=5)
    for p in alive:
        p.kill()
    assert not alive, f"workers outlived their parent: {[p.pid for p in alive]}"


def _dask_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dask", *args]


def _scheduler_address(sched_file: Path, timeout: float) -> str:
    """The address in a scheduler file, once the scheduler has written all of it (the file appears
    before its contents do)."""
    import json

    deadline = time.monotonic() + timeout
    while True:
        try:
            return json.loads(sched_file.read_text())["address"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.slow
def test_dask_worker_loss_is_resumable(serial_report: Path, tmp_path: Path):
    """A real scheduler and one worker on 127.0.0.1: killing the worker and its nanny makes the report exit
    non-zero with one line within 60 s; a resumed run (fresh worker) completes and matches a serial run."""
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    log = open(tmp_path / "dask.log", "w")

    def start(*args: str) -> subprocess.Popen:
        p = subprocess.Popen(_dask_cli(*args), cwd=tmp_path, stdout=log, stderr=log, start_new_session=True)
        procs.append(p)
        return p

    def worker() -> subprocess.Popen:
        return start("worker", "--scheduler-file", str(sched_file), "--host", "127.0.0.1", "--nworkers", "1",
                     "--nthreads", "1", "--no-dashboard")

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--scheduler-file", str(sched_file),
              "--no-dashboard")
        address = _scheduler_address(sched_file, timeout=30)
        w = worker()
        run = subprocess.Popen([sys.executable, "-c", SMALL_REPORT, "--out", "rep",
                                "--scheduler", address], cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "ATTNSIM_DASK_NO_WORKER_SECONDS": "5"})
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not list((tmp_path / "rep").rglob("*.json")):
            time.sleep(0.1)
        for p in psutil.Process(w.pid).children(recursive=True) + [psutil.Process(w.pid)]:
            p.kill()
        killed = time.monotonic()
        _, err = run.communicate(timeout=limit(60))
        assert time.monotonic() - killed < 60
        assert run.returncode == RESUMABLE_EXIT, err
        lines = [line for line in err.strip().splitlines() if not PROGRESS.match(line)]  # beside its progress
        assert len(lines) == 1 and "run the same command again" in lines[0] and "Traceback" not in err
        worker()
        resumed = small_report("--out", "rep", "--scheduler", address, cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert (tmp_path / "rep" / "checks.csv").read_text() == (serial_report / "rep" / "checks.csv").read_text()
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=10)
        log.close()



class _LostResult:
    """A future dask reports finished whose worker died before its result was fetched: dask reschedules it,
    and ``result()`` without a timeout would wait for a worker that never comes."""

    def result(self, timeout: float | None = None) -> list:
        if timeout is None:
            raise AssertionError("result() without a timeout waits forever once the worker is gone")
        time.sleep(min(timeout, 0.01))
        # what distributed itself logs on the way (its recovery, a cancelled gather's traceback)
        logging.getLogger("distributed.client").warning("Couldn't gather 1 keys, rescheduling")
        logging.getLogger("asyncio").error("Task exception was never retrieved")
        raise TimeoutError


class _NoWorkers:
    def nthreads(self) -> dict:
        return {}


def test_result_lost_with_its_worker_becomes_resumable(monkeypatch, caplog):
    """A finished task whose worker dies before the result is gathered, with no worker left: the sweep
    ends with the resumable error after the no-worker grace period instead of waiting forever, and
    what distributed logs meanwhile does not reach stderr (the error is the one line a user sees)."""
    import dask.distributed

    from attnsim.verify import executors
    from attnsim.verify.registry import ResumableError

    fut = _LostResult()
    monkeypatch.setattr(dask.distributed, "wait", lambda fs, timeout, return_when: ({fut}, set()))
    monkeypatch.setattr(executors, "NO_WORKER_SECONDS", 0.2)
    t0 = time.monotonic()
    with pytest.raises(ResumableError, match="no live worker"):
        list(executors._dask_results(_NoWorkers(), [fut]))
    assert time.monotonic() - t0 < 10
    assert not [r for r in caplog.records if r.name.split(".")[0] in ("distributed", "asyncio")]
    assert logging.getLogger("distributed.client").level != logging.CRITICAL + 1  # levels restored


class AllExit(Exception):
    """Named as distributed's internal exception of an abandoned gather."""


def _orphan_task_exception(loop, exc: Exception) -> None:
    async def fail():
        raise exc

    task = loop.create_task(fail())
    loop.run_until_complete(asyncio.sleep(0))
    del task  # never retrieved: asyncio reports it when the task is collected
    gc.collect()


def test_abandoned_gathers_are_not_printed_but_other_task_errors_are(caplog):
    """After a worker dies, distributed leaves tasks ending in ``AllExit`` that asyncio would report,
    traceback and all, on stderr (after the one-line error); those are dropped, anything else is not."""
    from types import SimpleNamespace

    from attnsim.verify.executors import _ignore_abandoned_gathers

    loop = asyncio.new_event_loop()
    try:
        _ignore_abandoned_gathers(SimpleNamespace(loop=SimpleNamespace(asyncio_loop=loop)))
        _orphan_task_exception(loop, AllExit())
        assert not [r for r in caplog.records if r.name == "asyncio"]
        _orphan_task_exception(loop, ValueError("a real failure"))
        assert [r for r in caplog.records if r.name == "asyncio"]
    finally:
        loop.close()


def test_coroutines_a_stopped_client_leaves_are_collected_quietly():
    """A client stopped by an interrupt leaves tornado's pending coroutines behind; Python warns ("coroutine …
    was never awaited") when they are collected, which can be after the cluster's block has ended. Once a
    cluster has been used that warning is dropped; other RuntimeWarnings still show."""
    import warnings

    from attnsim.verify.dask_local import quiet_dask_logs

    async def pending() -> None:
        pass

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("default")
        with quiet_dask_logs():
            pass
        coroutine = pending()
        del coroutine  # never awaited, collected after the block
        gc.collect()
        warnings.warn("a real warning", RuntimeWarning)
    assert [str(w.message) for w in seen] == ["a real warning"]
