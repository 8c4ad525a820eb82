"""The disk store of symbolic theories (attnsim.theory.store): a stored theory reads back to the very trees
derived, anything else on disk is a miss that is derived again, and a derivation under a break (derived_here)
neither reads nor writes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
import sympy as sp
from limits import limit

from attnsim.paper_refs import get
from attnsim.theory import store, symbolic
from attnsim.theory.symbolic import analyse, analyse_upper, derived_here, theory_key, upper_key

# an exact count with ceilings (Lemma 3.1's calls) and the sort's closed upper formula, with floors, Min and Max
# (the k-hop protocol's rounds): the forms that must read back
CASES = [("two_heads.lemma_3_1", "calls", False), ("anna.khop", "sorting_rounds", True)]


def _fields(theory: symbolic.ResourceTheory) -> dict[str, object]:
    return {k: sp.srepr(v) if isinstance(v, sp.Basic) else v for k, v in vars(theory).items()}


@pytest.fixture
def fresh_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty store of this test's own, and no theory kept in this process from elsewhere."""
    monkeypatch.setenv(store.STORE_ENV, str(tmp_path))
    monkeypatch.setattr(symbolic, "_KNOWN", {})
    return tmp_path


def _key(cid: str, resource: str, upper: bool) -> symbolic.TheoryKey:
    return (upper_key if upper else theory_key)(get(cid), resource)


def _theory(cid: str, resource: str, upper: bool) -> symbolic.ResourceTheory | None:
    return (analyse_upper if upper else analyse)(get(cid), resource)


@pytest.mark.parametrize(("cid", "resource", "upper"), CASES)
def test_a_stored_theory_reads_back_to_the_trees_derived(fresh_store: Path, cid: str, resource: str, upper: bool):
    derived = _theory(cid, resource, upper)
    assert derived is not None and derived.leading_constant is not None
    assert len(list(fresh_store.glob("*.json"))) == 1
    read = store.load(_key(cid, resource, upper))
    assert read is not None and _fields(symbolic.ResourceTheory(**read)) == _fields(derived)


def test_what_does_not_verify_is_a_miss_derived_again_and_written_over(fresh_store: Path):
    cid, resource, upper = CASES[0]
    key = _key(cid, resource, upper)
    derived = _theory(cid, resource, upper)
    (entry,) = fresh_store.glob("*.json")
    good = entry.read_text()
    other = dict(json.loads(good), key=["two_heads.thm_1_1", *json.loads(good)["key"][1:]])
    edited = json.loads(good)
    edited["exact"] = edited["exact"].replace("Integer(2)", "Integer(3)", 1)
    assert edited["exact"] != json.loads(good)["exact"]
    assert store.load(key) is not None
    for bad in (good[:40], "{}", "not json", json.dumps(other), json.dumps(dict(json.loads(good), fingerprint="0")),
                json.dumps(dict(json.loads(good), verdict=None)), json.dumps(edited)):
        entry.write_text(bad)
        assert store.load(key) is None, bad[:60]
    symbolic._analyse.cache_clear()  # derived again, not taken from this process's memory
    assert _fields(_theory(cid, resource, upper)) == _fields(derived)
    assert entry.read_text() == good


def test_a_derivation_under_a_break_neither_reads_nor_writes_the_store(fresh_store: Path):
    cid, resource, upper = CASES[0]
    assert _theory(cid, resource, upper).verdict != symbolic.LOOSE  # stored, unbroken: calls are tight
    entries = {p: p.read_text() for p in fresh_store.glob("*.json")}
    symbolic._analyse.cache_clear()
    try:
        with derived_here(), mock.patch.object(symbolic, "_limit_or_upper", lambda *a, **k: (sp.Integer(0), False)):
            assert _theory(cid, resource, upper).verdict == symbolic.LOOSE  # the break is met, not the stored theory
            assert _theory("two_heads.thm_1_1", "calls", False) is not None
    finally:
        symbolic._analyse.cache_clear()
    assert {p: p.read_text() for p in fresh_store.glob("*.json")} == entries


def test_a_store_turned_off_or_unwritable_leaves_the_derivation_as_it_is(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    cid, resource, upper = CASES[0]
    monkeypatch.setattr(symbolic, "_KNOWN", {})
    monkeypatch.setenv(store.STORE_ENV, "off")
    assert store.folder() is None and _theory(cid, resource, upper) is not None
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv(store.STORE_ENV, str(blocked / "store"))  # a folder that cannot be made
    assert _theory(cid, resource, upper) is not None and store.load(_key(cid, resource, upper)) is None
    monkeypatch.delenv(store.STORE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert store.folder() == tmp_path / "xdg" / "attnsim" / "theory"


def test_the_fingerprint_is_the_derivations_code_and_sympys_version():
    sources = sorted(Path(store.__file__).parent.glob("*.py"))
    assert {p.name for p in sources} >= {"symbolic.py", "formulas.py", "leading.py", "store.py"}
    before = store.fingerprint()
    store.fingerprint.cache_clear()
    try:
        with mock.patch.object(sp, "__version__", "0.0"):
            assert store.fingerprint() != before
    finally:
        store.fingerprint.cache_clear()
    assert store.fingerprint() == before


def _waiting_on_a_lock(pid: int) -> bool:
    """Whether ``/proc/locks`` lists a lock that process ``pid`` waits for (its lines ``N: -> POSIX ... pid ...``)."""
    return any("->" in line and str(pid) in line.split() for line in Path("/proc/locks").read_text().splitlines())


def _other_process(cid: str, resource: str, upper: bool, body: str) -> subprocess.Popen:
    """A second Python process that builds the theory's ``key`` and runs ``body`` with it, its stdout piped."""
    program = ("from attnsim.paper_refs import get\nfrom attnsim.theory import store, symbolic\n"
               f"key = symbolic.{'upper_key' if upper else 'theory_key'}(get({cid!r}), {resource!r})\n{body}")
    return subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)


def _seen_waiting(other: subprocess.Popen) -> bool:
    """Whether ``other`` is seen waiting on a lock before it ends (or a loaded machine's minute passes)."""
    deadline = time.monotonic() + limit(60)
    while not _waiting_on_a_lock(other.pid) and other.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return _waiting_on_a_lock(other.pid)


LINUX_LOCKS = pytest.mark.skipif(store.fcntl is None or not Path("/proc/locks").exists(),
                                 reason="the lock is fcntl's, and a wait is read from Linux's /proc/locks")


@LINUX_LOCKS
def test_a_process_that_misses_a_theory_being_derived_waits_for_its_entry(fresh_store: Path):
    """While one process derives a theory under its lock, another that misses the same theory waits, then reads
    the holder's entry instead of taking the same limits again: here the entry the holder writes is marked, and the
    other process prints the mark. Without the lock the other process is never seen waiting, and derives the theory
    itself."""
    cid, resource, upper = CASES[0]
    key = _key(cid, resource, upper)
    with store.claimed(key):
        other = _other_process(cid, resource, upper, "print(symbolic._derived(key).verdict)")
        waited = _seen_waiting(other)
        store.save(key, {**vars(symbolic._analyse(*key)), "verdict": "written by the holder"})
    out, _ = other.communicate(timeout=limit(60))
    assert waited, "the other process did not wait for the theory's lock"
    assert out.strip() == "written by the holder"


@LINUX_LOCKS
def test_a_child_forked_while_the_lock_is_held_does_not_keep_it(fresh_store: Path):
    """The report forks its pool workers while its local lane may be deriving: once the deriving block ends, the
    lock is free though the forked child lives on (an flock, shared with the child's copy of the file, stayed held
    until the child ended, and every other process missing that theory waited for it)."""
    cid, resource, upper = CASES[0]
    key = _key(cid, resource, upper)
    with store.claimed(key):
        child = os.fork()
        if child == 0:  # pragma: no cover - the child only lives on
            time.sleep(600)
            os._exit(0)
    try:
        other = _other_process(cid, resource, upper, "with store.claimed(key):\n    print('taken')")
        blocked = _seen_waiting(other) or other.poll() is None
        if blocked:
            other.kill()
        out, _ = other.communicate(timeout=limit(60))
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    assert not blocked and out.strip() == "taken", "the lock was still held while the forked child lived"
