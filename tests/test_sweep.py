"""verify.sweep: executors agree record for record; an interrupted or killed sweep resumes from its cache."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest
from limits import limit
from rich.console import Console

from attnsim.verify.registry import UsageError
from attnsim.verify.report.build import records_csv
from attnsim.verify.sweep import Cache, Point, code_version, grid, sweep

QUIET = Console(file=io.StringIO())


class Interrupted(Exception):
    """Stands for Ctrl-C (a real KeyboardInterrupt would also stop pytest)."""


def points(n: int | None = None) -> list[Point]:
    pts = [p for p in grid(["two_heads.lemma_3_1"], quick=True) if p.numerics in (None, "exact")]
    return pts[:n] if n else pts


def test_grid_multiplies_seeds_and_numerics_but_keeps_pinned_ones():
    pts = grid(["two_heads.lemma_3_1"], quick=True, seeds=[0, 1], numerics=["exact", "fraction"])
    base = grid(["two_heads.lemma_3_1"], quick=True)
    n_pinned = sum(p.numerics is not None for p in base)
    pinned = [p for p in pts if p.numerics not in ("exact", "fraction")]
    assert len(pinned) == 2 * n_pinned and {p.seed for p in pinned} == {0, 1}  # numerics kept, seeds multiplied
    assert len(pts) - len(pinned) == 4 * (len(base) - n_pinned)
    with pytest.raises(UsageError, match="^claim: "):
        grid(["two_heads.nope"])


def test_keys_depend_on_every_field():
    v = code_version()
    base = Point("two_heads.lemma_3_1", {"N": 8, "M": 4}, "exact", 0)
    others = [Point("two_heads.lemma_3_1", {"N": 8, "M": 4}, "exact", 1),
              Point("two_heads.lemma_3_1", {"N": 16, "M": 4}, "exact", 0),
              Point("two_heads.lemma_3_1", {"N": 8, "M": 4}, "fraction", 0)]
    assert len({base.key(v), base.key("other-version"), *(p.key(v) for p in others)}) == 5
    assert base.key(v) == Point("two_heads.lemma_3_1", {"M": 4, "N": 8}, "exact", 0).key(v)


def test_serial_processes_and_dask_give_identical_records():
    """Dask: an embedded LocalCluster of 2 single-threaded worker *processes* (forked)."""
    pts = points()
    serial = sweep(pts, executor="serial", console=QUIET, chunk_size=2)
    dask = sweep(pts, executor="dask", workers=2, console=QUIET, chunk_size=2)
    procs = sweep(pts, executor="processes", workers=2, console=QUIET, chunk_size=3)
    assert serial.records == dask.records == procs.records
    assert [r["claim"] for r in serial.records] == [p.claim for p in pts]
    assert all(r["verdict"] == "pass" for r in serial.records) and serial.computed == len(pts)


def test_interrupt_after_k_tasks_then_resume(tmp_path):
    pts = points()
    full = sweep(pts, console=QUIET, cache=tmp_path / "full")
    done = []

    def stop(k: int) -> None:
        done.append(k)
        if k == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        sweep(pts, console=QUIET, cache=tmp_path / "c", chunk_size=2, on_task=stop)
    assert done == [1, 2]
    stored = list((tmp_path / "c").rglob("*.json"))
    assert len(stored) == 4 and not list((tmp_path / "c").rglob(".*"))  # no temporary files left behind
    again = sweep(pts, console=QUIET, cache=tmp_path / "c", chunk_size=2)
    assert (again.cached, again.computed) == (4, len(pts) - 4)
    assert records_csv(again.records) == records_csv(full.records)
    assert sweep(pts, console=QUIET, cache=tmp_path / "c").computed == 0


def test_killed_process_loses_no_finished_record(tmp_path):
    """SIGKILL the sweeping process after 2 tasks; a restart computes only what is missing."""
    script = textwrap.dedent(f"""
        import io, os, signal
        from rich.console import Console
        from attnsim.verify.sweep import grid, sweep
        pts = [p for p in grid(["two_heads.lemma_3_1"], quick=True) if p.numerics in (None, "exact")]
        def kill(k):
            if k == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        sweep(pts, cache={str(tmp_path / "c")!r}, chunk_size=3, on_task=kill, console=Console(file=io.StringIO()))
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=limit(120))
    assert p.returncode == -9, p.stderr
    pts = points()
    assert len(list((tmp_path / "c").rglob("*.json"))) == 6
    resumed = sweep(pts, console=QUIET, cache=tmp_path / "c")
    assert (resumed.cached, resumed.computed) == (6, len(pts) - 6)
    assert records_csv(resumed.records) == records_csv(sweep(pts, console=QUIET).records)


def test_corrupt_cache_entry_is_recomputed(tmp_path):
    pts = points(2)
    first = sweep(pts, console=QUIET, cache=tmp_path)
    key = pts[0].key(code_version())
    Cache(tmp_path).path(key).write_text("{half a rec")
    again = sweep(pts, console=QUIET, cache=tmp_path)
    assert again.computed == 1 and again.records == first.records


@pytest.mark.parametrize("kw, needle", [(dict(executor="cluster"), "^executor: "),
                                        (dict(executor="serial", scheduler="tcp://x:1"), "^scheduler: "),
                                        (dict(workers=0), "^workers: ")])
def test_bad_options(kw, needle):
    with pytest.raises(UsageError, match=needle):
        sweep(points(1), console=QUIET, **kw)


def test_bad_grid_point_is_a_failing_record():
    rec = sweep([Point("two_heads.lemma_3_1", {"N": 8, "M": 1})], console=QUIET).records[0]
    assert rec["verdict"] == "fail" and rec["reasons"][0].startswith("error: M: ")
