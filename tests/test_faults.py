"""The fault catalogue (docs/faults.md): bad inputs and faults, each ending in one line and a known exit code.

Every row runs the command line in this process (the refusals come before any work, so a row takes
milliseconds once the package is loaded) and asserts: exactly one line on stderr, starting ``error:``;
the exit code; no traceback; no process left behind; the working folder unchanged. Faults that need a
real process (a full stdout, an interrupt, a kill in the middle of a sweep, a Dask scheduler and worker
on 127.0.0.1) run as subprocesses, bounded in time, and clean up after themselves.
"""

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

import numpy as np
import psutil
import pytest

from attnsim.verify.cli.app import main
from attnsim.verify.registry import RESUMABLE_EXIT, all_checkers

CLI = [sys.executable, "-m", "attnsim.verify.cli"]
CHECK = ["check", "two_heads.lemma_3_1", "--N", "64", "--M", "8", "--d", "4"]
PREC = ["precision", "two_heads.lemma_3_1", "--N", "64", "--M", "8"]


def _npy_header_only(path: Path, shape: tuple[int, ...]) -> None:
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": shape})


def _inputs(root: Path) -> None:
    """The bad input files the catalogue names ({in} in an argument is this folder)."""
    root.mkdir(exist_ok=True)
    X = np.zeros((64, 4))
    for name, (idx, value) in {"big": ((3, 2), 1e300), "nan": ((1, 1), np.nan), "inf": ((2, 0), -np.inf)}.items():
        A = X.copy()
        A[idx] = value
        np.save(root / f"{name}.npy", A)
    I64 = np.zeros((64, 4), dtype=np.int64)
    I64[5, 1] = np.iinfo(np.int64).max
    np.save(root / "i64.npy", I64)
    I64[5, 1] = np.iinfo(np.int64).min
    np.save(root / "i64min.npy", I64)
    np.save(root / "f128.npy", np.zeros((64, 4), dtype=np.longdouble))
    np.save(root / "complex.npy", np.zeros((64, 4), dtype=complex))
    np.save(root / "shape.npy", np.zeros((32, 4)))
    np.save(root / "obj.npy", np.zeros((64, 4), dtype=object), allow_pickle=True)
    np.savez(root / "z.npz", X=X)
    (root / "empty.npy").write_bytes(b"")
    (root / "text.npy").write_text("not an array\n")
    (root / "folder.npy").mkdir(exist_ok=True)
    _npy_header_only(root / "huge.npy", (2 ** 40, 4))
    (root / "afile").write_text("a file, not a folder\n")


# (id, argv, exit code, a phrase the one line must contain)
CASES = [
    # resources: numerics caps and memory estimates, refused before any work
    ("exact-D-64000", CHECK + ["--numerics", "exact:64000"], 2, "--numerics"),
    ("exact-D-1e7", CHECK + ["--numerics", "exact:10000000"], 2, "--numerics"),
    ("fraction-D-huge", CHECK + ["--numerics", "fraction:99999"], 2, "--numerics"),
    ("symbolic-D-huge", CHECK + ["--numerics", "symbolic:99999"], 2, "--numerics"),
    ("mp-bits-1e9", CHECK + ["--numerics", "mp:1000000000"], 2, "--numerics"),
    ("mp-bits-0", CHECK + ["--numerics", "mp:0"], 2, "--numerics"),
    ("mp-bits-text", CHECK + ["--numerics", "mp:abc"], 2, "--numerics"),
    ("mp-no-bits", CHECK + ["--numerics", "mp"], 2, "--numerics"),
    ("numerics-unknown", CHECK + ["--numerics", "bogus"], 2, "--numerics"),
    ("numerics-fixed-q0", CHECK + ["--numerics", "fixed:q0.5"], 2, "--numerics"),
    ("d-20000", CHECK + ["--d", "20000", "--numerics", "float64"], 2, "--d"),
    ("N-1e12", CHECK + ["--N", "1000000000000"], 2, "--N"),
    ("N-1e5-exact", CHECK + ["--N", "100000", "--numerics", "exact"], 2, "--N"),
    ("max-memory-small", CHECK + ["--N", "2048", "--max-memory", "1M"], 2, "--N"),
    ("max-memory-text", CHECK + ["--max-memory", "lots"], 2, "--max-memory"),
    ("max-memory-zero", CHECK + ["--max-memory", "0"], 2, "--max-memory"),
    ("max-memory-share", CHECK + ["--max-memory", "250%"], 2, "--max-memory"),
    # parameter values
    ("N-fullwidth", CHECK + ["--N", "６４"], 2, "--N"),
    ("N-empty", CHECK + ["--N", ""], 2, "--N"),
    ("N-negative", CHECK + ["--N", "-5"], 2, "--N"),
    ("N-fraction", CHECK + ["--N", "1.5"], 2, "--N"),
    ("N-nan", CHECK + ["--N", "nan"], 2, "--N"),
    ("M-one", CHECK + ["--M", "1"], 2, "--M"),
    ("seed-negative", CHECK + ["--seed", "-1"], 2, "--seed"),
    ("min-bits-nan", CHECK + ["--numerics", "float64", "--min-bits", "nan"], 2, "--min-bits"),
    ("min-bits-inf", CHECK + ["--numerics", "float64", "--min-bits", "inf"], 2, "--min-bits"),
    ("min-bits-negative", CHECK + ["--numerics", "float64", "--min-bits", "-1"], 2, "--min-bits"),
    ("numerics-empty", CHECK + ["--numerics", ""], 2, "--numerics"),
    ("numerics-equals-empty", CHECK + ["--numerics="], 2, "--numerics"),
    ("claim-empty", ["check", ""], 2, "empty"),
    ("claim-unknown", ["check", "two_heads.nope"], 2, "two_heads.nope"),
    ("param-unknown", CHECK + ["--bogus", "3"], 2, "--bogus"),
    ("param-no-value", CHECK + ["--d"], 2, "--d"),
    # input files
    ("input-header-2^40", CHECK + ["--input-file", "{in}/huge.npy"], 2, "--input-file"),
    ("input-1e300-exact", CHECK + ["--input-file", "{in}/big.npy"], 2, "(3, 2)"),
    ("input-1e300-float64", CHECK + ["--input-file", "{in}/big.npy", "--numerics", "float64"], 2, "(3, 2)"),
    ("input-1e300-fixed", CHECK + ["--input-file", "{in}/big.npy", "--numerics", "fixed:q16.16"], 2, "(3, 2)"),
    ("input-int64-max-float64", CHECK + ["--input-file", "{in}/i64.npy", "--numerics", "float64"], 2, "(5, 1)"),
    ("input-int64-min-float64", CHECK + ["--input-file", "{in}/i64min.npy", "--numerics", "float64"], 2, "(5, 1)"),
    ("input-int64-max-exact", CHECK + ["--input-file", "{in}/i64.npy"], 2, "(5, 1)"),
    ("input-int64-max-mp", CHECK + ["--input-file", "{in}/i64.npy", "--numerics", "mp:32"], 2, "(5, 1)"),
    ("input-nan", CHECK + ["--input-file", "{in}/nan.npy"], 2, "non-finite"),
    ("input-inf", CHECK + ["--input-file", "{in}/inf.npy", "--numerics", "float64"], 2, "non-finite"),
    ("input-0-bytes", CHECK + ["--input-file", "{in}/empty.npy"], 2, "empty.npy"),
    ("input-npz", CHECK + ["--input-file", "{in}/z.npz"], 2, "z.npz"),
    ("input-float128", CHECK + ["--input-file", "{in}/f128.npy"], 2, "float128"),
    ("input-complex", CHECK + ["--input-file", "{in}/complex.npy"], 2, "complex"),
    ("input-object", CHECK + ["--input-file", "{in}/obj.npy"], 2, "obj.npy"),
    ("input-text", CHECK + ["--input-file", "{in}/text.npy"], 2, "text.npy"),
    ("input-shape", CHECK + ["--input-file", "{in}/shape.npy"], 2, "(32, 4)"),
    ("input-folder", CHECK + ["--input-file", "{in}/folder.npy"], 2, "folder"),
    ("input-missing", CHECK + ["--input-file", "{in}/missing.npy"], 2, "no such file"),
    ("input-empty-path", CHECK + ["--input-file", ""], 2, "--input-file"),
    # run
    ("run-N-1e12", ["run", "--N", "1000000000000", "--M", "64"], 2, "--N"),
    ("run-d-huge", ["run", "--N", "1024", "--M", "64", "--d", "100000000"], 2, "--N"),
    ("run-workers-32", ["run", "--N", "256", "--M", "64", "--workers", "32"], 2, "--workers"),
    ("run-workers-0", ["run", "--N", "256", "--M", "64", "--workers", "0"], 2, "--workers"),
    ("run-json-folder", ["run", "--N", "256", "--M", "64", "--json", "{in}"], 2, "folder"),
    ("run-json-proc", ["run", "--N", "256", "--M", "64", "--json", "/proc/attnsim.json"], 2, "/proc"),
    ("run-json-no-parent", ["run", "--N", "256", "--M", "64", "--json", "{in}/no/such/r.json"], 2, "--json"),
    ("run-json-empty", ["run", "--N", "256", "--M", "64", "--json", ""], 2, "--json"),
    ("run-scheduler-empty", ["run", "--N", "256", "--M", "64", "--scheduler", ""], 2, "--scheduler"),
    ("run-N-fullwidth", ["run", "--N", "２５６"], 2, "--N"),
    ("run-max-memory", ["run", "--N", "65536", "--M", "64", "--max-memory", "1M"], 2, "--N"),
    # precision
    ("prec-exp-bits-0", PREC + ["--exp-bits", "0"], 2, "--exp-bits"),
    ("prec-exp-bits-99", PREC + ["--exp-bits", "99"], 2, "--exp-bits"),
    ("prec-int-bits-0", PREC + ["--format-family", "fixed", "--int-bits", "0"], 2, "--int-bits"),
    ("prec-int-bits-60", PREC + ["--format-family", "fixed", "--int-bits", "60"], 2, "--int-bits"),
    ("prec-options", PREC + ["--options", "bogus"], 2, "--options"),
    ("prec-options-empty", PREC + ["--options", ""], 2, "--options"),
    ("prec-family", PREC + ["--format-family", "bogus"], 2, "--format-family"),
    ("prec-N-1e12", ["precision", "two_heads.lemma_3_1", "--N", "1000000000000", "--M", "8"], 2, "--N"),
    ("prec-N-fullwidth", ["precision", "two_heads.lemma_3_1", "--N", "６４", "--M", "8"], 2, "--N"),
    ("prec-N-text", ["precision", "two_heads.lemma_3_1", "--N", "a,b", "--M", "8"], 2, "--N"),
    ("prec-decode", PREC + ["--decode", "float:bogus"], 2, "--decode"),
    ("prec-blocks-format", PREC + ["--blocks-format", "mp:99999999"], 2, "--blocks-format"),
    ("prec-target", PREC + ["--target", "2^5"], 2, "--target"),
    ("prec-d-0", PREC + ["--d", "0"], 2, "--d"),
    # report: output folder, cache, workers, executor
    ("report-out-file", ["report", "--quick", "--out", "{in}/afile"], 2, "afile"),
    ("report-out-proc", ["report", "--quick", "--out", "/proc/attnsim-report"], 2, "/proc"),
    ("report-out-under-file", ["report", "--quick", "--out", "{in}/afile/sub"], 2, "afile"),
    ("report-out-empty", ["report", "--quick", "--out", ""], 2, "--out"),
    ("report-cache-file", ["report", "--quick", "--out", "{in}/rep", "--cache", "{in}/afile"], 2, "--cache"),
    ("report-workers-32", ["report", "--quick", "--out", "{in}/rep", "--workers", "32"], 2, "--workers"),
    ("report-scheduler", ["report", "--quick", "--out", "{in}/rep", "--scheduler", "bogus"], 2, "--scheduler"),
    ("report-scheduler-no-dask", ["report", "--quick", "--out", "{in}/rep", "--scheduler", "tcp://127.0.0.1:1"], 2,
     "--scheduler"),
    ("bench-json-folder", ["bench", "--quick", "--json", "{in}"], 2, "folder"),
]


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


def _descendants() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fault-inputs")
    _inputs(root)
    all_checkers()  # imports every checker once: the rows time the refusals, not the imports
    return root


def test_catalogue_is_large_enough():
    assert len(CASES) >= 60 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("argv, code, phrase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fault(argv: list[str], code: int, phrase: str, inputs: Path, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNSIM_MAX_MEMORY", "50%")
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{in}", str(inputs)) for a in argv]
    before_inputs, before_cwd, before_procs = _tree(inputs), _tree(tmp_path), _descendants()
    monkeypatch.setattr(sys, "argv", ["attnsim", *argv])
    start = time.monotonic()
    with pytest.raises(SystemExit) as exc:
        main()
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert exc.value.code == code, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], err
    assert "Traceback" not in err
    assert time.monotonic() - start < 5, "a refusal must come before any work"
    assert _descendants() <= before_procs
    assert _tree(inputs) == before_inputs and _tree(tmp_path) == before_cwd


# A progress line (long work off a terminal, on stderr) may come before the error: it is not an error line.
_PROGRESS = re.compile(r"^.+: \d+/\d+ \(\d+%\), [\d.]+ (s|min) elapsed")


def _one_line(p: subprocess.CompletedProcess) -> str:
    lines = [line for line in p.stderr.strip().splitlines() if not _PROGRESS.match(line)]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


def test_stdout_full():
    with open("/dev/full", "w") as full:
        p = subprocess.run([*CLI, "claims"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 1 and "stdout" in _one_line(p)


def test_unreachable_scheduler_fails_fast(tmp_path: Path):
    start = time.monotonic()
    p = subprocess.run([*CLI, "run", "--N", "256", "--M", "64", "--scheduler", "tcp://127.0.0.1:1"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 2 and "--scheduler" in _one_line(p)
    # the command's own start-up (imports) comes on top of the 3 s budget of the connection
    assert time.monotonic() - start < 3 + 25


def test_interrupt_is_one_line(tmp_path: Path):
    proc = subprocess.Popen([*CLI, "check", "two_heads.lemma_3_1", "--N", "2048", "--M", "8", "--d", "4",
                             "--numerics", "exact"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            cwd=tmp_path)
    time.sleep(8)  # past start-up, well before the end of this exact run (minutes)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().splitlines() == ["interrupted"] and "Traceback" not in err


# A reduced report: the quick grids of a few claims, without the topic sections, so the slow faults take
# seconds of work (the subprocesses' start-up dominates).
SMALL_REPORT = """
import sys
import attnsim.verify.report.build as build
from attnsim.verify.sweep import grid
claims = ["two_heads.lemma_3_3", "two_heads.cor_3_2", "anna.khop", "two_heads.lemma_3_1"]
build.grid = lambda quick=False: grid(claims, quick=True)
build.SECTIONS = {}
from attnsim.verify.cli.app import main
sys.argv = ["attnsim", "report", "--quick", *sys.argv[1:]]
main()
"""


def _small_report(*args: str, cwd: Path, timeout: float = 150, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SMALL_REPORT, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def serial_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh serial run of the reduced report: the reference the faulted runs must equal."""
    root = tmp_path_factory.mktemp("serial-report")
    p = _small_report("--out", "rep", "--scheduler", "serial", cwd=root)
    assert p.returncode == 0, p.stderr
    return root / "rep"


@pytest.mark.slow
def test_bad_cache_entries_are_set_aside(serial_report: Path, tmp_path: Path):
    """A record copied over another's file, ``{}``, non-UTF-8 bytes and a truncated file are set aside and
    recomputed: the rerun's checks.csv equals the fresh run's, and the report counts them."""
    shutil.copytree(serial_report, tmp_path / "rep")
    entries = sorted((tmp_path / "rep" / ".cache").rglob("*.json"))
    assert len(entries) >= 5
    entries[1].write_bytes(entries[0].read_bytes())
    entries[2].write_text("{}")
    entries[3].write_bytes(b"\xff\xfe not utf-8")
    entries[4].write_bytes(entries[4].read_bytes()[:40])
    again = _small_report("--out", "rep", "--scheduler", "serial", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "rep" / "checks.csv").read_text() == (serial_report / "checks.csv").read_text()
    assert len(list((tmp_path / "rep" / ".cache").rglob("*.bad"))) == 4
    assert "4 cache entries set aside" in again.stdout
    assert "4 cache entries did not verify" in (tmp_path / "rep" / "report.md").read_text()


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
        _, err = run.communicate(timeout=60)
        assert time.monotonic() - killed < 60
        assert run.returncode == RESUMABLE_EXIT, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "run the same command again" in lines[0] and "Traceback" not in err
        worker()
        resumed = _small_report("--out", "rep", "--scheduler", address, cwd=tmp_path)
        assert resumed.returncode == 0, resumed.stderr
        assert (tmp_path / "rep" / "checks.csv").read_text() == (serial_report / "checks.csv").read_text()
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

    from attnsim.verify import sweep as sweep_mod
    from attnsim.verify.registry import ResumableError

    fut = _LostResult()
    monkeypatch.setattr(dask.distributed, "wait", lambda fs, timeout, return_when: ({fut}, set()))
    monkeypatch.setattr(sweep_mod, "NO_WORKER_SECONDS", 0.2)
    t0 = time.monotonic()
    with pytest.raises(ResumableError, match="no live worker"):
        list(sweep_mod._dask_results(_NoWorkers(), [fut]))
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

    from attnsim.verify.sweep import _ignore_abandoned_gathers

    loop = asyncio.new_event_loop()
    try:
        _ignore_abandoned_gathers(SimpleNamespace(loop=SimpleNamespace(asyncio_loop=loop)))
        _orphan_task_exception(loop, AllExit())
        assert not [r for r in caplog.records if r.name == "asyncio"]
        _orphan_task_exception(loop, ValueError("a real failure"))
        assert [r for r in caplog.records if r.name == "asyncio"]
    finally:
        loop.close()
