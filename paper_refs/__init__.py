"""The claims of the three papers, as data.

Each ``<paper>.toml`` beside this file holds a ``[paper]`` table and a list ``[[claims]]``.
Schema of one claim (validated by :func:`load`; a wrong file raises :class:`SchemaError`)::

    [[claims]]
    id = "two_heads.lemma_3_1"          # "<paper>.<result>", unique
    label = "Lemma 3.1"                 # as numbered in the paper
    kind = "lemma"                      # theorem|lemma|corollary|claim|proposition|definition|lower_bound|rebuttal
    statement = "..."                   # our own words
    assumptions = ["..."]
    implemented = true                  # a checker in attnsim.verify.claims runs it
    construction = "attnsim.sim.two_heads.blocks"   # optional: the module that realises it
    limit = "n"                         # the variable that goes to infinity for containment checks
    stated = ["eps", "eps1"]            # optional: parameters the statement fixes (constants as n grows)

    definitions_from = "two_heads.thm_1_1"  # optional: start from that claim's definitions (same paper),
                                           # so a formula several claims share is written once
    [claims.definitions]                # optional: derived symbols, substituted before evaluating
    n = "ceiling(N/b)"                  #   (overrides an inherited definition of the same name)

    [claims.resources.calls]            # one table per counted resource
    bound = "n**2"                      # the paper's big-O class (sympy syntax)
    exact = "2*n**2"                    # optional: the exact count of the scheme as implemented
    note = "..."                        # optional
    constant = 3.5                      # optional: C in "measured <= C * bound" for a single record, either
    calibrated_at = 256                 #   fitted once at this value of the limit variable and frozen, or
    stated_by = "Thm 4.1, §4"           #   the paper's own constant (the result that states it); one of the two

Formulas are plain sympy expressions in the checker's parameters and the definitions. Nothing in
``attnsim.sim`` reads these files: a construction never knows its own bound.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

KINDS = ("theorem", "lemma", "corollary", "claim", "proposition", "definition", "lower_bound", "rebuttal")
PAPERS = ("two_heads", "anna", "tint")


class SchemaError(ValueError):
    """A paper_refs TOML file does not follow the schema in this module's docstring."""


@dataclass(frozen=True)
class Resource:
    """One counted resource of a claim: the paper's bound, our exact count of the scheme, and a note."""
    name: str
    bound: str | None
    exact: str | None = None
    note: str = ""
    constant: float | None = None
    calibrated_at: float | None = None
    stated_by: str | None = None


@dataclass(frozen=True)
class Claim:
    """One claim of a paper as stored in its TOML file: statement, parameters, resources, assumptions."""
    id: str
    paper: str
    label: str
    kind: str
    statement: str
    assumptions: tuple[str, ...] = ()
    implemented: bool = False
    construction: str | None = None
    limit: str = "n"
    stated: tuple[str, ...] = ()
    definitions: dict[str, str] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Paper:
    """One paper: its identity, citation and claims."""
    id: str
    title: str
    citation: str
    claims: tuple[Claim, ...]


_REQUIRED = ("id", "label", "kind", "statement")
_KNOWN = set(_REQUIRED) | {"assumptions", "implemented", "construction", "limit", "stated", "definitions",
                           "definitions_from", "resources", "extra"}
_RESOURCE_KEYS = {"bound", "exact", "note", "constant", "calibrated_at", "stated_by"}


def _resource(name: str, r: Any, where: str) -> Resource:
    if not isinstance(r, dict) or set(r) - _RESOURCE_KEYS:
        raise SchemaError(f"{where}: resource {name!r} takes only {', '.join(sorted(_RESOURCE_KEYS))}")
    if "bound" not in r and "exact" not in r:
        raise SchemaError(f"{where}: resource {name!r} needs a bound or an exact formula")
    constant = r.get("constant")
    if constant is not None:
        if isinstance(constant, bool) or not isinstance(constant, (int, float)) or not constant > 0:
            raise SchemaError(f"{where}: resource {name!r}: constant must be a positive number")
        if "bound" not in r or (("calibrated_at" in r) == ("stated_by" in r)):
            raise SchemaError(f"{where}: resource {name!r}: a constant needs a bound and exactly one of "
                              "calibrated_at (the size it was fitted at) or stated_by (the result that states it)")
    elif "calibrated_at" in r or "stated_by" in r:
        raise SchemaError(f"{where}: resource {name!r}: calibrated_at and stated_by go with a constant")
    return Resource(name, r.get("bound"), r.get("exact"), r.get("note", ""),
                    None if constant is None else float(constant), r.get("calibrated_at"), r.get("stated_by"))


def _claim(paper: str, raw: dict[str, Any], where: str) -> Claim:
    missing = [k for k in _REQUIRED if not isinstance(raw.get(k), str) or not raw.get(k)]
    if missing:
        raise SchemaError(f"{where}: missing or empty {', '.join(missing)}")
    cid = raw["id"]
    where = f"{where} ({cid})"
    unknown = set(raw) - _KNOWN
    if unknown:
        raise SchemaError(f"{where}: unknown keys {sorted(unknown)}")
    if not cid.startswith(paper + "."):
        raise SchemaError(f"{where}: id must start with '{paper}.'")
    if raw["kind"] not in KINDS:
        raise SchemaError(f"{where}: kind {raw['kind']!r} not in {KINDS}")
    assumptions = raw.get("assumptions", [])
    if not isinstance(assumptions, list) or not all(isinstance(a, str) for a in assumptions):
        raise SchemaError(f"{where}: assumptions must be a list of strings")
    definitions = raw.get("definitions", {})
    if not all(isinstance(v, str) for v in definitions.values()):
        raise SchemaError(f"{where}: definitions must map names to formula strings")
    stated = raw.get("stated", [])
    if not isinstance(stated, list) or not all(isinstance(a, str) for a in stated):
        raise SchemaError(f"{where}: stated must be a list of parameter names")
    res = {name: _resource(name, r, where) for name, r in raw.get("resources", {}).items()}
    return Claim(
        id=cid, paper=paper, label=raw["label"], kind=raw["kind"], statement=raw["statement"].strip(),
        assumptions=tuple(assumptions), implemented=bool(raw.get("implemented", False)),
        construction=raw.get("construction"), limit=raw.get("limit", "n"), stated=tuple(stated),
        definitions=dict(definitions), resources=res, extra=dict(raw.get("extra", {})),
    )


def load(paper: str) -> Paper:
    """Load and validate ``<paper>.toml``."""
    if paper not in PAPERS:
        raise SchemaError(f"--paper: unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    try:
        text = resources.files(__name__).joinpath(f"{paper}.toml").read_text(encoding="utf-8")
    except FileNotFoundError:
        return Paper(paper, paper, "", ())
    data = tomllib.loads(text)
    meta = data.get("paper", {})
    if not isinstance(meta.get("title"), str):
        raise SchemaError(f"{paper}.toml: [paper] needs a title")
    raw = data.get("claims", [])
    claims = tuple(_claim(paper, c, f"{paper}.toml claim #{i + 1}") for i, c in enumerate(raw))
    ids = [c.id for c in claims]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SchemaError(f"{paper}.toml: duplicate claim ids {sorted(dup)}")
    parents = {c["id"]: c["definitions_from"] for c in raw if "definitions_from" in c}
    return Paper(paper, meta["title"], meta.get("citation", ""), _inherit(paper, claims, parents))


def _inherit(paper: str, claims: tuple[Claim, ...], parents: dict[str, Any]) -> tuple[Claim, ...]:
    """Each claim with ``definitions_from`` gets its parent's (resolved) definitions under its own."""
    by_id = {c.id: c for c in claims}

    def resolved(cid: str, seen: tuple[str, ...]) -> dict[str, str]:
        if cid in seen:
            raise SchemaError(f"{paper}.toml: definitions_from is circular: {' -> '.join(seen + (cid,))}")
        if cid not in parents:
            return by_id[cid].definitions
        parent = parents[cid]
        if not isinstance(parent, str) or parent not in by_id:
            raise SchemaError(f"{paper}.toml ({cid}): definitions_from names no claim of this paper: {parent!r}")
        return {**resolved(parent, seen + (cid,)), **by_id[cid].definitions}

    return tuple(replace(c, definitions=resolved(c.id, ())) if c.id in parents else c for c in claims)


def all_claims() -> dict[str, Claim]:
    """Every claim of every paper, by id."""
    return {c.id: c for p in PAPERS for c in load(p).claims}


def get(claim_id: str) -> Claim:
    """The claim with this id; ``KeyError`` if no paper has it."""
    claims = all_claims()
    if claim_id not in claims:
        raise KeyError(claim_id)
    return claims[claim_id]
