"""A folder built once per test run, shared by every xdist worker.

A module-scoped fixture is built once per worker that runs one of its tests, so a costly one whose tests land
on two workers is built twice. ``once`` builds it in the run's common temporary folder (the parent of each
worker's own) under a file lock: the first worker to ask builds it, the others wait and reuse it. Without
xdist it is this session's folder. A build that fails leaves no mark, so the next worker that asks retries
it (and fails in its own test too). ``pytest-xdist``'s ``--dist loadgroup`` would keep such tests on one
worker instead, but with pytest 9 it leaves the test ids unchanged and so groups nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest


def once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` as ``build(folder)`` left it, built by the first worker of this run to ask."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # .../pytest-N/popen-gwK: the parent is this run's, shared by its workers
    folder, done = base / f"once-{name}", base / f"once-{name}.done"
    with open(base / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                build(folder)
                done.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


def shared_record(tmp_path_factory: pytest.TempPathFactory, claim: str, params: dict, numerics: str | None,
                  seed: int = 0) -> dict:
    """``run_check``'s record of one point, computed once per run by the first worker to ask (several tests read
    the quick point of a slow claim: tint.under_2b's takes about 10 CPU s)."""
    from attnsim.verify.check import check_numerics, run_check
    from attnsim.verify.registry import get_checker

    chk = get_checker(claim)  # the point as run_check resolves it: defaults filled in
    point = [claim, chk.resolve(params), check_numerics(chk, numerics, None), seed]
    key = hashlib.sha256(json.dumps(point, sort_keys=True, default=repr).encode()).hexdigest()[:16]

    def build(folder: Path) -> None:
        (folder / "record.json").write_text(json.dumps(run_check(claim, params, numerics, seed), default=repr))

    return json.loads((once(tmp_path_factory, f"record-{key}", build) / "record.json").read_text())
