"""The claims of the papers, as data: the one place that lists the papers and their symbols.

Each ``<paper>.toml`` beside this file holds a ``[paper]`` table and a list ``[[claims]]``; the papers
are those files, in the order of their ``[paper] order`` key, then the papers other installed packages
register under the entry-point group ``attnsim.papers`` (name: the paper id, value: the package that
holds ``<paper>.toml``; docs/extending.md). The paper table (validated by :func:`load`)::

    [paper]
    title = "..."
    citation = "..."
    order = 1                           # position among the built-in papers
    modules = ["pkg.checks"]            # optional: modules that register the paper's checkers and twins
    sections = ["pkg.report:section"]   # optional: report sections, after the paper's claims
    [paper.symbols]                     # optional: how formulas print a symbol (theory/notation.py)
    Hp = { text = "H′", latex = "H'" }
    fused = { flag = ["paper scheme", "fused scheme"] }   # a 0/1 flag, printed as cases

(What checking found is never written here: findings are computed from the run's records by finders,
:mod:`attnsim.verify.findings`.)

Schema of one claim (a wrong file raises :class:`SchemaError`)::

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
    no_checker = "..."                  # without a checker: why, in one line (restated claims say extra.restated_as)
    reconstructed = "..."               # optional: what we had to fill in, one line (the reasoning in docs/)
    weakened = "..."                    # optional: what we check is weaker than the statement, one line
    docs = "reconstructions.md"         # optional: the docs/ page with the reasoning
    route = "..."                       # optional: whose construction runs (the paper's, or ours and how), one line
    regime = "..."                      # optional, one line: what no run can say of the range the runs reach (a
                                        #   condition the construction fixes); sizes come from the grids

    definitions_from = "two_heads.thm_1_1"  # optional: start from that claim's definitions (same paper), and
                                           # from its [claims.extra.growth] forms, so a formula several claims
                                           # share is written once
    measured = ["s", "P"]               # optional, with definitions_from: names the checker measures (its derived
                                        #   values); their inherited definitions and growth forms are dropped, so
                                        #   the run's value stands in the records (and the claim's own growth
                                        #   form in the analysis)
    [claims.definitions]                # optional: derived symbols, substituted before evaluating
    n = "ceiling(N/b)"                  #   (overrides an inherited definition of the same name)

    [claims.resources.calls]            # one table per counted resource
    bound = "n**2"                      # the paper's big-O class (sympy syntax)
    exact = "2*n**2"                    # optional: the exact count of the scheme as implemented
    upper = "2*n**2 + n"                # optional, where no exact count exists: an exact upper formula from the
                                        #   proof or the construction's design (a table's capacity), held
                                        #   measured <= upper at every record, its containment in the bound by theory
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
from functools import lru_cache
from importlib import metadata, resources
from typing import Any

KINDS = ("theorem", "lemma", "corollary", "claim", "proposition", "definition", "lower_bound", "rebuttal")
ENTRY_POINTS = "attnsim.papers"
"""The entry-point group through which another package registers a paper (docs/extending.md)."""


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
    upper: str | None = None


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
    measured: tuple[str, ...] = ()
    definitions: dict[str, str] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    no_checker: str = ""
    reconstructed: str = ""
    weakened: str = ""
    docs: str = ""
    route: str = ""
    regime: str = ""


@dataclass(frozen=True)
class Symbol:
    """How a formula symbol prints: plain text, LaTeX, or (a 0/1 flag) the names of its two cases."""
    name: str
    text: str
    latex: str
    flag: tuple[str, str] | None = None


@dataclass(frozen=True)
class Paper:
    """One paper: its identity, citation, claims, symbols, and the modules that check it."""
    id: str
    title: str
    citation: str
    claims: tuple[Claim, ...]
    symbols: dict[str, Symbol] = field(default_factory=dict)
    modules: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()


_REQUIRED = ("id", "label", "kind", "statement")
_LINES = ("no_checker", "reconstructed", "weakened", "docs", "route", "regime")
_KNOWN = set(_REQUIRED) | {"assumptions", "implemented", "construction", "limit", "stated", "definitions",
                           "definitions_from", "measured", "resources", "extra", *_LINES}
_PAPER_KEYS = {"id", "title", "citation", "order", "modules", "sections", "symbols"}
_RESOURCE_KEYS = {"bound", "exact", "note", "constant", "calibrated_at", "stated_by", "upper"}


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
    if "upper" in r and ("bound" not in r or "exact" in r or not isinstance(r["upper"], str)):
        raise SchemaError(f"{where}: resource {name!r}: upper (a formula) goes with a bound and without an exact "
                          "count (an exact count is the stronger evidence)")
    return Resource(name, r.get("bound"), r.get("exact"), r.get("note", ""),
                    None if constant is None else float(constant), r.get("calibrated_at"), r.get("stated_by"),
                    r.get("upper"))


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
    measured = raw.get("measured", [])
    if not isinstance(measured, list) or not all(isinstance(a, str) for a in measured):
        raise SchemaError(f"{where}: measured must be a list of names")
    if "definitions_from" not in raw and measured:
        raise SchemaError(f"{where}: measured drops inherited definitions, so it goes with definitions_from")
    if set(measured) & set(definitions):
        raise SchemaError(f"{where}: measured names {sorted(set(measured) & set(definitions))} are also defined here")
    res = {name: _resource(name, r, where) for name, r in raw.get("resources", {}).items()}
    bad = [k for k in _LINES if not isinstance(raw.get(k, ""), str) or "\n" in raw.get(k, "")]
    if bad:
        raise SchemaError(f"{where}: {', '.join(bad)} must be one line of text")
    return Claim(
        id=cid, paper=paper, label=raw["label"], kind=raw["kind"], statement=raw["statement"].strip(),
        assumptions=tuple(assumptions), implemented=bool(raw.get("implemented", False)),
        construction=raw.get("construction"), limit=raw.get("limit", "n"), stated=tuple(stated),
        measured=tuple(measured), definitions=dict(definitions), resources=res, extra=dict(raw.get("extra", {})),
        **{k: raw.get(k, "") for k in _LINES},
    )


def _symbols(raw: Any, where: str) -> dict[str, Symbol]:
    if not isinstance(raw, dict):
        raise SchemaError(f"{where}: [paper.symbols] must map names to tables")
    out = {}
    for name, spec in raw.items():
        flag = spec.get("flag") if isinstance(spec, dict) else None
        if not isinstance(spec, dict) or set(spec) - {"text", "latex", "flag"} or (
                flag is not None and (len(flag) != 2 or not all(isinstance(f, str) for f in flag))):
            raise SchemaError(f"{where}: symbol {name!r} takes text, latex and flag = [case 0, case 1]")
        out[name] = Symbol(name, spec.get("text", name), spec.get("latex", spec.get("text", name)),
                           tuple(flag) if flag else None)
    return out


def _paper(paper: str, text: str) -> Paper:
    data = tomllib.loads(text)
    meta = data.get("paper", {})
    where = f"{paper}.toml"
    if not isinstance(meta.get("title"), str):
        raise SchemaError(f"{where}: [paper] needs a title")
    if set(meta) - _PAPER_KEYS:
        raise SchemaError(f"{where}: [paper] has unknown keys {sorted(set(meta) - _PAPER_KEYS)}")
    raw = data.get("claims", [])
    claims = tuple(_claim(paper, c, f"{where} claim #{i + 1}") for i, c in enumerate(raw))
    ids = [c.id for c in claims]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SchemaError(f"{where}: duplicate claim ids {sorted(dup)}")
    parents = {c["id"]: c["definitions_from"] for c in raw if "definitions_from" in c}
    return Paper(paper, meta["title"], meta.get("citation", ""), _inherit(paper, claims, parents),
                 _symbols(meta.get("symbols", {}), where),
                 tuple(meta.get("modules", ())), tuple(meta.get("sections", ())))


def _inherit(paper: str, claims: tuple[Claim, ...], parents: dict[str, Any]) -> tuple[Claim, ...]:
    """Each claim with ``definitions_from`` gets its parent's (resolved) definitions under its own, and its
    parent's ``[claims.extra.growth]`` forms under its own (a growth form stands in for a definition in the
    analysis, so the two travel together); names the claim lists as ``measured`` take neither."""
    by_id = {c.id: c for c in claims}

    def resolved(cid: str, seen: tuple[str, ...]) -> tuple[dict[str, str], dict[str, Any]]:
        if cid in seen:
            raise SchemaError(f"{paper}.toml: definitions_from is circular: {' -> '.join(seen + (cid,))}")
        own = by_id[cid]
        own_growth = dict(own.extra.get("growth") or {})
        if cid not in parents:
            return own.definitions, own_growth
        parent = parents[cid]
        if not isinstance(parent, str) or parent not in by_id:
            raise SchemaError(f"{paper}.toml ({cid}): definitions_from names no claim of this paper: {parent!r}")
        defs, growth = resolved(parent, seen + (cid,))
        defs = {k: v for k, v in defs.items() if k not in own.measured}
        growth = {k: v for k, v in growth.items() if k not in own.measured}
        return {**defs, **own.definitions}, {**growth, **own_growth}

    def inherited(c: Claim) -> Claim:
        defs, growth = resolved(c.id, ())
        return replace(c, definitions=defs, extra={**c.extra, "growth": growth} if growth else c.extra)

    return tuple(inherited(c) if c.id in parents else c for c in claims)


@lru_cache(maxsize=1)
def _sources() -> dict[str, Any]:
    """Paper id -> the package whose ``<id>.toml`` holds it: this one's files by ``order``, then entry points."""
    here = resources.files(__name__)
    builtin = sorted((tomllib.loads(f.read_text(encoding="utf-8")).get("paper", {}).get("order", 999), f.name[:-5])
                     for f in here.iterdir() if f.name.endswith(".toml"))
    out: dict[str, Any] = {name: here for _, name in builtin}
    for ep in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        if ep.name not in out:
            out[ep.name] = ep.value
    return out


def papers() -> tuple[str, ...]:
    """Every paper id: the built-in papers in their order, then those registered by entry points."""
    return tuple(_sources())


@lru_cache(maxsize=None)
def load(paper: str) -> Paper:
    """Load and validate ``<paper>.toml`` (built in, or from the package its entry point names)."""
    sources = _sources()
    if paper not in sources:
        raise SchemaError(f"--paper: unknown paper {paper!r}; known: {', '.join(sources)}")
    where = sources[paper]
    folder = resources.files(where) if isinstance(where, str) else where
    return _paper(paper, folder.joinpath(f"{paper}.toml").read_text(encoding="utf-8"))


def all_claims() -> dict[str, Claim]:
    """Every claim of every paper, by id."""
    return {c.id: c for p in papers() for c in load(p).claims}


def symbols(paper: str | None = None) -> dict[str, Symbol]:
    """How each formula symbol prints: ``paper``'s own, or every paper's (earlier papers win a clash)."""
    out: dict[str, Symbol] = {}
    for p in reversed([paper] if paper else papers()):
        out.update(load(p).symbols)
    return out


PAPERS = papers()
"""The paper ids at import time (:func:`papers`)."""


def get(claim_id: str) -> Claim:
    """The claim with this id; ``KeyError`` if no paper has it."""
    claims = all_claims()
    if claim_id not in claims:
        raise KeyError(claim_id)
    return claims[claim_id]
