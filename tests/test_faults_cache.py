"""Faults of the caches (docs/faults.md, "Cache"): every entry a record, a report section or a teeth pass is
read from must answer the question asked of it, or be set aside (renamed ``*.bad``), counted and computed
again — never trusted, never fatal, never waited on (a FIFO is not opened)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from attnsim.verify import cache as cache_mod
from attnsim.verify.cache import Cache, checksum, seal
from attnsim.verify.records import dumps, loads
from attnsim.verify.report.section_cache import cached_section
from attnsim.verify.sweep import Point, code_version, run_point, sweep
from attnsim.verify.teeth import ClaimTeeth, TwinResult, load, save

SMALL = Point("two_heads.lemma_3_1", {"N": 16, "M": 4, "d": 2})
OTHER = Point("two_heads.lemma_3_1", {"N": 24, "M": 4, "d": 2})


@pytest.fixture(scope="module")
def records() -> tuple[dict, dict]:
    return run_point(SMALL), run_point(OTHER)


def _envelope(cache: Cache, point: Point) -> tuple[Path, dict]:
    path = cache.path(point.key(code_version()))
    return path, json.loads(path.read_text())


def _forge(path: Path, env: dict, record: dict, *, old_style: bool) -> None:
    """Write ``record`` into ``env`` with its checksum recomputed (over the record text alone when
    ``old_style``, as a hand edit following the first envelope would; else with this code's own function)."""
    text = dumps(record)
    env["payload"] = text
    env["checksum"] = hashlib.sha256(text.encode()).hexdigest() if old_style else checksum(
        env["kind"], env["key"], text)
    path.write_text(json.dumps(env))


def _fresh(tmp: Path, records: tuple[dict, dict]) -> Cache:
    cache = Cache(tmp / ".cache")
    for point, rec in zip((SMALL, OTHER), records):
        cache.put(point.key(code_version()), point.fields(), code_version(), rec)
    return cache


@pytest.mark.parametrize("old_style", [True, False], ids=["sha256-of-record", "this-code's-checksum"])
def test_another_rows_record_or_an_edited_count_is_set_aside(records, tmp_path, old_style):
    cache = _fresh(tmp_path, records)
    path, env = _envelope(cache, SMALL)
    _forge(path, env, records[1], old_style=old_style)  # another parameter set under this row's name
    assert Cache(cache.root).get(SMALL.key(code_version()), SMALL.fields(), code_version()) is None
    assert path.with_name(path.name + ".bad").exists()
    cache = _fresh(tmp_path, records)
    path, env = _envelope(cache, SMALL)
    edited = {**records[0], "calls": 987654321}
    _forge(path, env, edited, old_style=old_style)
    again = Cache(cache.root)
    assert again.get(SMALL.key(code_version()), SMALL.fields(), code_version()) is None
    assert len(again.set_aside) == 1


def test_a_sweep_recomputes_what_was_set_aside_and_equals_a_fresh_one(records, tmp_path):
    fresh = sweep([SMALL, OTHER], cache=tmp_path / "a").records
    cache = Cache(tmp_path / "a")
    path, env = _envelope(cache, SMALL)
    _forge(path, env, records[1], old_style=False)
    again = sweep([SMALL, OTHER], cache=tmp_path / "a")
    assert again.set_aside == 1 and again.computed == 1 and again.records == fresh


def _plant(path: Path, kind: str) -> None:
    """Put something that is not an entry at ``path``: a folder, a FIFO, a link out of the cache, ``[]``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        outside = path.parent.parent.parent / "outside.json"
        outside.write_text("{}")
        path.symlink_to(outside)
    else:
        path.write_text("[]")


KINDS = ["directory", "fifo", "symlink", "empty-list"]


@pytest.mark.parametrize("kind", KINDS)
def test_record_entries_that_are_not_files_are_set_aside_without_waiting(records, tmp_path, kind):
    cache = _fresh(tmp_path, records)
    key = SMALL.key(code_version())
    _plant(cache.path(key), kind)
    start = time.monotonic()
    again = Cache(cache.root)
    assert again.get(key, SMALL.fields(), code_version()) is None
    assert time.monotonic() - start < 5 and len(again.set_aside) == 1
    again.put(key, SMALL.fields(), code_version(), records[0])
    assert Cache(cache.root).get(key, SMALL.fields(), code_version()) == records[0]


@pytest.mark.parametrize("where", ["shard", "root"])
def test_a_file_where_a_cache_folder_should_be_is_set_aside(records, tmp_path, where):
    cache = _fresh(tmp_path, records)
    key = SMALL.key(code_version())
    target = cache.path(key).parent if where == "shard" else cache.root
    for p in sorted(target.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    target.rmdir()
    target.write_text("not a folder")
    again = Cache(cache.root)
    assert again.get(key, SMALL.fields(), code_version()) is None and again.set_aside
    again.put(key, SMALL.fields(), code_version(), records[0])
    assert Cache(cache.root).get(key, SMALL.fields(), code_version()) == records[0]


@pytest.mark.parametrize("kind", ["edited", *KINDS])
def test_section_entries_that_do_not_verify_are_recomputed(tmp_path, kind):
    calls = []

    def compute() -> str:
        calls.append(1)
        return "the section"

    assert cached_section(tmp_path, "a.section", True, [], compute) == "the section"
    (entry,) = (tmp_path / ".cache" / "sections").glob("*.json")
    if kind == "edited":
        env = json.loads(entry.read_text())
        env["payload"] = json.dumps({"markdown": "FORGED-SECTION-TEXT", "files": []})
        entry.write_text(json.dumps(env))
    else:
        _plant(entry, kind)
    before = len(cache_mod.SET_ASIDE)
    assert cached_section(tmp_path, "a.section", True, [], compute) == "the section"
    assert len(calls) == 2 and len(cache_mod.SET_ASIDE) == before + 1
    assert cached_section(tmp_path, "a.section", True, [], compute) == "the section" and len(calls) == 2


def _teeth() -> list[ClaimTeeth]:
    twins = (TwinResult("c", "t1", "w", "construction", "caught", "r"),
             TwinResult("c", "t2", "w", "construction", "caught", "r"))
    return [ClaimTeeth("c", 2, twins, 2)]


@pytest.mark.parametrize("kind", ["toothless", "no-claims", *KINDS])
def test_teeth_entries_that_do_not_verify_are_set_aside(tmp_path, kind):
    path = tmp_path / ".cache" / "teeth-x.json"
    save(_teeth(), path, "v1", True)
    assert load(path, "v1")["c"]["ok"] is True
    if kind in ("toothless", "no-claims"):
        env = json.loads(path.read_text())
        body = json.loads(env["payload"])
        if kind == "toothless":
            body["claims"][0].update(ok=False, problem="no teeth")  # the twins say otherwise
        else:
            del body["claims"]
        env["payload"] = json.dumps(body)
        path.write_text(json.dumps(env))
    else:
        _plant(path, kind)
    before = len(cache_mod.SET_ASIDE)
    assert load(path, "v1") is None and len(cache_mod.SET_ASIDE) == before + 1
    save(_teeth(), path, "v1", True)
    assert load(path, "v1")["c"]["ok"] is True


def test_a_self_consistent_forgery_with_this_codes_checksum_is_still_checked_field_by_field(records, tmp_path):
    """The envelope's checksum can be recomputed by anyone running this code; what a record says is held
    against the row (parameters after defaults) and against itself (its counts and its verdict)."""
    cache = _fresh(tmp_path, records)
    path, env = _envelope(cache, SMALL)
    record = loads(env["payload"])
    record["counts"]["calls"] = record["calls"] = 987654321  # consistent with itself, not with its formula
    env["payload"] = dumps(record)
    path.write_text(seal(env["kind"], env["key"], env["payload"]))
    assert Cache(cache.root).get(SMALL.key(code_version()), SMALL.fields(), code_version()) is None


def test_an_entry_resealed_without_this_users_secret_is_set_aside_and_the_sweep_equals_a_fresh_one(
        records, tmp_path, monkeypatch):
    """The checksum is an HMAC keyed by a secret outside the output folder: an edit resealed with this very code
    but another user's key (a folder copied from elsewhere) does not verify."""
    fresh = sweep([SMALL, OTHER], cache=tmp_path / "a").records
    path, env = _envelope(Cache(tmp_path / "a"), SMALL)
    edited = {**records[0], "verdict": "fail", "reasons": ["edited"]}
    monkeypatch.setenv(cache_mod.SECRET_ENV, str(tmp_path / "another-users.key"))
    path.write_text(seal(env["kind"], env["key"], dumps(edited)))
    monkeypatch.delenv(cache_mod.SECRET_ENV)
    again = sweep([SMALL, OTHER], cache=tmp_path / "a")
    assert again.set_aside == 1 and again.computed == 1 and again.records == fresh
    assert path.with_name(path.name + ".bad").exists()


def test_the_spot_audit_catches_an_edit_resealed_with_the_secret_and_reports_the_fresh_record(records, tmp_path):
    """A holder of the secret can reseal an edit the field checks cannot see (here a note added to the record's
    extra fields); the spot audit computes cached records again and fails on the difference, returning the
    fresh record."""
    fresh = sweep([SMALL, OTHER], cache=tmp_path / "a").records
    path, env = _envelope(Cache(tmp_path / "a"), SMALL)
    edited = {**records[0], "extra": {**records[0].get("extra", {}), "note": "edited"}}
    _forge(path, env, edited, old_style=False)
    quiet = sweep([SMALL, OTHER], cache=tmp_path / "a")
    assert quiet.set_aside == 0 and quiet.records[0] != fresh[0], "the forgery passes every field check"
    audited = sweep([SMALL, OTHER], cache=tmp_path / "a", audit=2)
    assert audited.audited == 2 and audited.computed == 0 and audited.cached == 2
    assert [f["params"]["N"] for f in audited.audit_failures] == [SMALL.params["N"]]
    why = audited.audit_failures[0]["reasons"][0]
    assert "spot audit" in why and "extra" in why
    assert audited.records == fresh
    assert sweep([SMALL, OTHER], cache=tmp_path / "a", audit=2).audit_failures == []  # the fresh one was stored


def test_the_secret_is_made_once_private_and_whole_and_a_malformed_one_is_replaced(tmp_path, monkeypatch):
    key_file = tmp_path / "cfg" / "cache.key"
    monkeypatch.setenv(cache_mod.SECRET_ENV, str(key_file))
    first = cache_mod.checksum("record", {"k": 1}, "text")
    assert key_file.stat().st_mode & 0o777 == 0o600 and len(key_file.read_bytes()) == cache_mod.SECRET_BYTES
    cache_mod._SECRETS.clear()
    assert cache_mod.checksum("record", {"k": 1}, "text") == first  # read back, not made again
    key_file.write_bytes(b"short")
    cache_mod._SECRETS.clear()
    assert cache_mod.checksum("record", {"k": 1}, "text") != first
    assert len(key_file.read_bytes()) == cache_mod.SECRET_BYTES


def test_a_secret_that_cannot_be_kept_gives_a_key_of_this_process_and_one_note(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(cache_mod.SECRET_ENV, str(blocker / "cache.key"))  # below a file: cannot be made
    notes = len(cache_mod.SECRET_NOTES)
    assert len(cache_mod.secret()) == cache_mod.SECRET_BYTES
    assert cache_mod.secret() == cache_mod.secret()
    assert len(cache_mod.SECRET_NOTES) == notes + 1 and "computed again" in cache_mod.SECRET_NOTES[-1]
