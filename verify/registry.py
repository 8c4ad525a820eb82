"""Registry of checkers: how a claim id becomes something ``attnsim check`` can run.

Each paper topic has one module in ``attnsim.verify.claims`` whose functions are decorated with
:func:`checker` (report material lives in ``attnsim.verify.report.sections``, broken variants in
``attnsim.verify.twins``). A checker *measures*: it builds the case,
runs the construction and the reference, and returns a :class:`Measurement` whose counts come
from a :class:`~attnsim.sim.ledger.Ledger`. It never computes a predicted count or a bound;
``attnsim.verify.check`` adds those from ``paper_refs`` through ``theory``.

Example::

    @checker("anna.thm_5_2",
             params=[Param("N", int, 32, "sequence length"), Param("modulus", int, 37, "Match2 modulus")],
             grid=lambda quick: [{"N": 32, "modulus": 37}])
    def check_thm_5_2(ctx: CheckContext) -> Measurement:
        ...
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from attnsim.sim.errors import AttnsimError


class UsageError(AttnsimError):
    """Bad input from the user: one clear line naming the parameter; the CLI exits 2.

    The parameter is data (``param="M"``): ``str(error)`` reads ``M: must be >= 2, got 1`` in Python, and only
    the command line writes it as its flag (``--M: ...``). A message still written in the command line's words
    (``"--max-memory: ..."``, one flag before the colon) is read into that form here, at the one edge, so
    that no error raised in Python names a flag.
    """

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        """``message`` about ``param``; a leading ``--flag:`` becomes ``param`` (dashes as underscores)."""
        lead = _FLAG_LEAD.match(message) if param is None else None
        if lead:
            param, message = lead.group(1).replace("-", "_"), lead.group(2)
        super().__init__(message, param=param)


_FLAG_LEAD = re.compile(r"^--([A-Za-z][\w-]*): (.*)$", re.DOTALL)


class ResumableError(AttnsimError):
    """A run stopped by its environment (a lost scheduler or workers) with its finished records saved:
    one line saying so, exit status :data:`RESUMABLE_EXIT`, and the same command resumes it."""


RESUMABLE_EXIT = 75

NO_NUMERICS = "none"
"""The numerics of a record whose claim computes in none the user chooses (a counting claim)."""


INT_MAX = 2 ** 53
"""Largest value of an integer parameter without a maximum of its own (exact in float64, so every cost
estimate of ``verify.cost`` is exact arithmetic on it)."""

FLOAT_MAX = 1e15
"""Largest magnitude of a real parameter without a maximum of its own."""


def flag(name: str) -> str:
    """The command-line spelling of parameter ``name``: ``n_sim`` is typed ``--n-sim``."""
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Param:
    """A parameter a checker accepts (``--name value`` on the command line) and its domain.

    The domain is the type, ``minimum`` and ``maximum`` (numbers; an integer without a maximum is capped
    at :data:`INT_MAX`, a real one at :data:`FLOAT_MAX`), ``choices`` and ``power_of_two`` (an integer that must
    be 2^n, refused with ``why_power_of_two``); every value is checked against it before any work, and a refusal
    names the flag as typed (:func:`flag`).
    """

    name: str
    type: type
    default: Any
    help: str
    minimum: float | None = None
    choices: tuple[Any, ...] | None = None
    maximum: float | None = None
    power_of_two: bool = False
    why_power_of_two: str = ""
    """Why the value must be a power of two, said when one that is not is refused."""

    @property
    def flag(self) -> str:
        """How the parameter is typed on the command line."""
        return flag(self.name)

    @property
    def upper(self) -> float | None:
        """The largest value allowed (numbers only): ``maximum``, else the type's cap."""
        if self.type not in (int, float):
            return None
        if self.maximum is not None:
            return self.maximum
        return INT_MAX if self.type is int else FLOAT_MAX

    def domain(self) -> str:
        """The domain in words, e.g. ``int >= 2``, ``float >= 0.01, <= 1`` or ``one of: a, b`` (the caps of
        the type, :data:`INT_MAX` and :data:`FLOAT_MAX`, go unsaid)."""
        if self.choices is not None:
            return "one of: " + ", ".join(map(str, self.choices))
        bounds = [f">= {self.minimum:g}"] if self.minimum is not None else []
        bounds += [f"<= {self.maximum:g}"] if self.maximum is not None else []
        bounds += ["a power of two"] if self.power_of_two else []
        return " ".join([self.type.__name__, ", ".join(bounds)]).strip()

    def parse(self, raw: Any) -> Any:
        """``raw`` (a command-line string or a value) as this parameter's type, validated."""
        f = self.flag
        if isinstance(raw, str) and not raw.strip():
            raise UsageError(f"{f}: empty value")
        if isinstance(raw, str) and self.type is not str and not raw.isascii():
            raise UsageError(f"{f}: {raw!r} has non-ASCII characters (digits are 0-9)")
        if isinstance(raw, str) and self.type is bool:
            if raw.lower() in ("1", "true", "yes", "on"):
                value: Any = True
            elif raw.lower() in ("0", "false", "no", "off"):
                value = False
            else:
                raise UsageError(f"{f}: expected true/false, got {raw!r}")
        elif raw is None or (isinstance(raw, self.type) and not (isinstance(raw, bool) and self.type is int)):
            value = raw
        else:
            try:
                value = self.type(raw)
            except (TypeError, ValueError, OverflowError):
                raise UsageError(f"{f}: expected {self.type.__name__}, got {raw!r}") from None
        if value is not None and self.type in (int, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise UsageError(f"{f}: must be a finite number, got {raw!r}")
            if self.minimum is not None and value < self.minimum:
                raise UsageError(f"{f}: must be >= {self.minimum:g}, got {value}")
            upper = self.upper
            if upper is not None and value > upper:
                raise UsageError(f"{f}: must be <= {upper:g}, got {value}")
            if self.type is float and self.minimum is None and value < -FLOAT_MAX:
                raise UsageError(f"{f}: must be >= {-FLOAT_MAX:g}, got {value}")
            if self.power_of_two and (value < 1 or value & (value - 1)):
                why = f" ({self.why_power_of_two})" if self.why_power_of_two else ""
                raise UsageError(f"{f}: must be a power of two{why}, got {value}")
        if value is not None and self.choices is not None and value not in self.choices:
            raise UsageError(f"{f}: must be one of {', '.join(map(str, self.choices))}; got {value!r}")
        return value


@dataclass
class CheckContext:
    """What a checker gets: validated parameters, the numerics name and the seed."""

    claim: str
    params: dict[str, Any]
    numerics: str
    seed: int
    min_bits: float | None = None


EVIDENCE_KINDS = ("independent", "self-consistency", "sanity")


@dataclass
class Measurement:
    """What a checker returns. Counts are read off a ledger by the checker.

    ``counts`` maps resource names (the keys of ``[claims.resources]`` in paper_refs) to measured
    values; ``agree`` is None when the claim has no output to compare (pure counting claims).
    ``derived`` holds parameters the checker derived (e.g. the block size b and n) that theory
    formulas may use. ``reasons`` explain any failure in words. ``evidence`` says what a pass
    rests on: ``independent`` (compared with a reference that shares no code with the construction
    beyond the numerics), ``self-consistency`` (our code against our own formula) or ``sanity`` (a
    necessary condition any answer meets). It has no default: every checker declares it, and an
    ``independent`` measurement names its ``reference`` (the function or expression that computes
    the truth; tests trace it against the construction).
    ``varying`` names the keys of ``counts`` and ``extra`` whose values a rerun does not reproduce to the
    byte (peak bytes, times): the record reports them beside its deterministic part
    (:func:`attnsim.verify.records.split_varying`), and the verdict may rest on them only through a
    statistic with a stated tolerance.
    """

    agree: bool | None
    error_bits: float | None = None
    counts: dict[str, float] = field(default_factory=dict)
    counts_by_tag: dict[str, int] = field(default_factory=dict)
    rounds: int | None = None
    derived: dict[str, Any] = field(default_factory=dict)
    length_convention: str | None = None
    reasons: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    varying: tuple[str, ...] = ()
    evidence: str = field(kw_only=True)
    reference: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.evidence not in EVIDENCE_KINDS:
            raise ValueError(f"evidence must be one of {EVIDENCE_KINDS}, got {self.evidence!r}")
        if self.evidence == "independent" and not self.reference:
            raise ValueError("an independent measurement names its reference (reference=...)")


CheckFn = Callable[[CheckContext], Measurement]
GridFn = Callable[[bool], list[dict[str, Any]]]
Relations = Callable[[Mapping[str, Any]], Iterator[tuple[str, str, Any]]]


@dataclass(frozen=True)
class ParamSweep:
    """A growth sweep in a parameter other than the claim's limit variable (the gap eps' - eps, k, |Sigma| ...):
    ``var`` is the size each point is judged at, a formula in the claim's parameters (``1/(eps1 - eps)``: rounds
    against 1/(eps'-eps) judged as 1/(eps'-eps) grows); ``grid(quick)`` its points (a fixed N, the parameter
    varied); ``resources`` the bounded resources whose bound depends on it (:func:`attnsim.verify.growth.judge`)."""

    var: str
    grid: GridFn
    resources: tuple[str, ...]

    def varied(self) -> str:
        """The parameter the sweep varies (its quick points differ in it alone; "" when they differ in several)."""
        points = self.grid(True)
        names = sorted({k for p in points for k in p if len({repr(q.get(k)) for q in points}) > 1})
        return names[0] if len(names) == 1 else ""


@dataclass(frozen=True)
class Checker:
    """A registered checker: its claim, function, parameters, default grid and numerics."""
    claim: str
    fn: CheckFn
    params: tuple[Param, ...]
    grid: GridFn
    numerics: tuple[str, ...]
    default_numerics: str
    growth_grid: GridFn | None = None
    shares: str | None = None
    param_sweeps: tuple[tuple[str, ParamSweep], ...] = ()
    """Named growth sweeps in other parameters (:class:`ParamSweep`), judged beside the sweep in N."""
    evidence: str | None = None
    """The evidence its records rest on, declared with the checker (:data:`EVIDENCE_KINDS`; None: not declared).
    A record whose measurement says otherwise fails (:func:`attnsim.verify.check.run_check`)."""
    relations: Relations | None = None
    """The checker's own relations between its parameters, those the tables of :mod:`attnsim.verify.relations` cannot
    state (a domain that depends on a quantity the construction computes from the others): given the resolved
    parameters, each relation they break as (parameter, what is wrong, the nearest value that keeps it or None)."""

    def param(self, name: str) -> Param:
        """The parameter called ``name``; a usage error lists the known ones."""
        for p in self.params:
            if p.name == name:
                return p
        raise UsageError(f"{flag(name)}: not a parameter of {self.claim} "
                         f"(it takes {', '.join(q.name for q in self.params) or 'no parameters'})")

    def resolve(self, given: dict[str, Any]) -> dict[str, Any]:
        """Defaults filled in, values parsed and validated; unknown names are a UsageError."""
        for name in given:
            self.param(name)
        return {p.name: p.parse(given.get(p.name, p.default)) for p in self.params}


_CHECKERS: dict[str, Checker] = {}


def size_grid(name: str, quick: tuple[Any, ...], full: tuple[Any, ...] | None = None, **fixed: Any) -> GridFn:
    """A growth grid: the parameters ``fixed`` with ``name`` at each of ``quick`` (or ``full`` when not quick;
    default the same values) — one point per size, everything else held, as a growth sweep needs."""
    return lambda q: [{**fixed, name: v} for v in (quick if q or full is None else full)]


def checker(
    claim: str,
    *,
    params: list[Param],
    grid: GridFn,
    numerics: tuple[str, ...] = ("exact", "symbolic", "mp", "float64"),
    default_numerics: str = "exact",
    growth_grid: GridFn | None = None,
    shares: str | None = None,
    param_sweeps: dict[str, ParamSweep] | None = None,
    evidence: str | None = None,
    relations: Relations | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the checker of ``claim``. ``numerics`` lists the accepted backend kinds; an empty
    tuple says the claim computes in none the user chooses (it counts): ``--numerics`` is then refused and
    its records say ``numerics: none``.

    ``growth_grid(quick)``: the points of the claim's growth sweep (``attnsim growth``,
    :mod:`attnsim.verify.growth`): at least 4 values of the claim's limit variable spanning at least 8x,
    everything else fixed, so that the log-log slope of measured / bound against size can be fitted.
    A point may pin ``numerics`` or ``seed`` as in ``grid``. ``param_sweeps``: named sweeps in other parameters
    (:class:`ParamSweep`), each judged by growth in its own variable.

    ``shares``: claims registered with the same name run one construction (the same function and
    parameters, which registration enforces), so a sweep measures each (parameters, numerics, seed) once
    for all of them (:func:`attnsim.verify.check.measurements_shared`); each claim's record is still
    judged against its own entry in paper_refs.

    ``evidence``: what its records rest on (:data:`EVIDENCE_KINDS`), declared here so that ``attnsim claims``
    can say it without running the check; a record whose measurement says otherwise fails.

    ``relations``: the checker's own relations between parameters (:attr:`Checker.relations`), refused before any
    work and kept by the fuzz as the tables of :mod:`attnsim.verify.relations` are.
    """
    if evidence is not None and evidence not in EVIDENCE_KINDS:
        raise ValueError(f"evidence must be one of {EVIDENCE_KINDS}, got {evidence!r}")

    def register(fn: CheckFn) -> CheckFn:
        if claim in _CHECKERS:
            raise RuntimeError(f"two checkers registered for {claim}")
        for other in _CHECKERS.values():
            if shares is not None and other.shares == shares and (other.fn is not fn
                                                                  or other.params != tuple(params)):
                raise RuntimeError(f"{claim} shares {shares!r} with {other.claim} but runs another function "
                                   "or takes other parameters")
        _CHECKERS[claim] = Checker(claim, fn, tuple(params), grid, numerics,
                                   default_numerics if numerics else NO_NUMERICS, growth_grid, shares,
                                   tuple((param_sweeps or {}).items()), evidence, relations)
        return fn

    return register


@lru_cache(maxsize=None)
def _own_modules() -> tuple[str, ...]:
    """attnsim's checker modules, its ``verify/claims`` folder listed once per process (every record's
    parameters are resolved through :func:`all_checkers`)."""
    from attnsim.verify import claims

    return tuple(f"{claims.__name__}.{mod.name}" for mod in pkgutil.iter_modules(claims.__path__))


def _load_all() -> None:
    """Import every checker module: attnsim's own, then those each paper's ``[paper] modules`` names
    (a paper another package registers, docs/extending.md)."""
    from attnsim.paper_refs import load, papers

    for name in _own_modules():
        importlib.import_module(name)
    for paper in papers():
        for name in load(paper).modules:
            importlib.import_module(name)


def load_checker(claim: str) -> Checker | None:
    """The checker of ``claim`` (None: no such claim), importing only the checker module that spells the claim
    id out where one does, so that ``attnsim check CLAIM -h`` does not wait for every paper's libraries; a claim
    registered under a computed name, or by another package, loads them all."""
    if claim not in _CHECKERS:
        from attnsim.verify import claims

        needle = f'"{claim}"'
        for name in _own_modules():
            source = Path(claims.__path__[0], name.rsplit(".", 1)[1] + ".py")
            if source.is_file() and needle in source.read_text(encoding="utf-8"):
                importlib.import_module(name)
                if claim in _CHECKERS:
                    break
    if claim not in _CHECKERS:
        _load_all()
    return _CHECKERS.get(claim)


def all_checkers() -> dict[str, Checker]:
    """Every registered checker by claim id (importing the checker modules first)."""
    _load_all()
    return dict(sorted(_CHECKERS.items()))


def get_checker(claim: str) -> Checker:
    """The checker of ``claim``; a usage error lists the known claims."""
    checkers = all_checkers()
    if claim not in checkers:
        raise UsageError(f"CLAIM: no checker for {claim!r}; `attnsim claims` lists the claims "
                         f"({', '.join(checkers) or 'none registered'})")
    return checkers[claim]
