"""Findings: what checking a paper found, one line each, computed from records of this run.

No finding is written by hand, and none lives in ``paper_refs/``. A *finder* registered for a paper
(:func:`finder`) is given the run's check records and returns :class:`Finding` objects: the line, the claim or
report anchor it links, and the records it read. A finder reuses a record of the run where the run holds the one
it needs (:func:`record_for`) and runs that check otherwise, so every finding names the records that computed it
and the command that computes each again (:func:`check_command`); a checker may also carry a finding in its record
(``extra.finding``, :func:`carried`). The report's front page lists them with both,
and ``findings.json`` holds them with their records. attnsim's own finders are in the modules of
:data:`BUILT_IN`; a paper of another package registers its finders in a module its ``[paper] modules`` names
(imported with its checkers).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from attnsim.sim.errors import AttnsimError
from attnsim.verify.registry import NO_NUMERICS, all_checkers, get_checker

BUILT_IN = ("attnsim.verify.findings.two_heads", "attnsim.verify.findings.tint")
"""The modules that register attnsim's own finders."""


@dataclass(frozen=True)
class Finding:
    """One line that a run computed, the claim id or report anchor where it shows, and the records it read."""

    paper: str
    text: str
    link: str
    records: tuple[dict[str, Any], ...]

    @property
    def sources(self) -> list[str]:
        """Each record it read, by name (:func:`record_name`)."""
        return [record_name(r) for r in self.records]

    @property
    def commands(self) -> list[str]:
        """The command that computes each record again (:func:`check_command`)."""
        return [check_command(r) for r in self.records]

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``findings.json``): text, link, and per record its name, command and the record."""
        return {"paper": self.paper, "text": self.text, "link": self.link,
                "records": [{"name": record_name(r), "command": check_command(r), "record": r} for r in self.records]}


Finder = Callable[[Sequence[dict[str, Any]]], list[Finding]]
_FINDERS: dict[str, list[Finder]] = {}


def finder(paper: str) -> Callable[[Finder], Finder]:
    """Register ``fn(records) -> [Finding]`` as a finder of ``paper``."""
    def register(fn: Finder) -> Finder:
        _FINDERS.setdefault(paper, [])
        if fn not in _FINDERS[paper]:
            _FINDERS[paper].append(fn)
        return fn
    return register


def record_name(r: dict[str, Any]) -> str:
    """``two_heads.lemma_3_1 N=64, M=8, d=16 (float64, seed 0)``: the record's claim, the parameters that differ
    from the checker's defaults, its numerics and seed."""
    params = ", ".join(f"{k}={v}" for k, v in _non_default(r).items())
    return f"{r['claim']}{' ' + params if params else ''} ({r.get('numerics')}, seed {r.get('seed', 0)})"


def check_command(r: dict[str, Any]) -> str:
    """The ``attnsim check`` command line that computes the record again."""
    args = [f"--{k} {str(v).lower() if isinstance(v, bool) else v}" for k, v in _non_default(r).items()]
    if r.get("numerics") not in (None, "none", get_checker(r["claim"]).default_numerics):
        args.append(f"--numerics {r['numerics']}")
    if r.get("seed"):
        args.append(f"--seed {r['seed']}")
    given = (r.get("extra") or {}).get("min_bits_given")
    if given is not None:
        args.append(f"--min-bits {given:g}")
    return " ".join(["attnsim check", r["claim"], *args])


def _non_default(r: dict[str, Any]) -> dict[str, Any]:
    defaults = {p.name: p.default for p in get_checker(r["claim"]).params}
    return {k: v for k, v in (r.get("params") or {}).items() if k not in defaults or defaults[k] != v}


def record_for(records: Sequence[dict[str, Any]], claim: str, params: dict[str, Any], numerics: str,
               seed: int = 0, min_bits: float | None = None) -> dict[str, Any]:
    """The run's record of ``claim`` at ``params`` (the checker's defaults filled in), ``numerics`` (``"none"`` for
    a claim that computes in none) and ``seed``; the check is run when the run holds none. With ``min_bits`` (a
    finding that measures bits rather than judging them) only a record that asked for those bits is taken."""
    from attnsim.verify.check import run_check

    full = get_checker(claim).resolve(dict(params))
    for r in records:
        if r.get("claim") == claim and r.get("params") == full and r.get("numerics") == numerics \
                and r.get("seed", 0) == seed and (min_bits is None or r.get("min_bits") == min_bits):
            return r
    return run_check(claim, dict(params), None if numerics == NO_NUMERICS else numerics, seed, min_bits)


def carried(paper: str, records: Sequence[dict[str, Any]]) -> list[Finding]:
    """The findings the run's records of ``paper`` carry themselves: a checker may put ``extra.finding =
    {"text": ...}`` into its record (computed from what it ran), one finding per distinct text."""
    out: dict[str, Finding] = {}
    for r in records:
        found = (r.get("extra") or {}).get("finding")
        if r.get("paper", str(r.get("claim", "")).split(".")[0]) == paper and isinstance(found, dict) \
                and found.get("text") and found["text"] not in out:
            out[found["text"]] = Finding(paper, str(found["text"]), r["claim"], (r,))
    return list(out.values())


def findings(paper: str, records: Sequence[dict[str, Any]]) -> list[Finding]:
    """Every finding of ``paper`` computed from ``records`` (its finders' order); a finder whose check a guard
    refuses gives a line that says so, with no record."""
    all_checkers()  # imports the papers' modules, whose finders register themselves
    for module in BUILT_IN:
        importlib.import_module(module)
    out = carried(paper, records)
    for fn in _FINDERS.get(paper, []):
        try:
            out += fn(records)
        except AttnsimError as exc:
            out.append(Finding(paper, f"not computed ({fn.__name__}): {exc}", paper, ()))
    return out
