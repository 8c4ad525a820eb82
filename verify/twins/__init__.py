"""Broken twins: deliberately wrong variants of what each claim's check relies on.

A twin breaks one thing — a construction's block boundary, a term of a recombination, the oracle's
limit, the ledger, a count formula, the agreement test — by patching it while the claim's check
runs; ``attnsim teeth`` (:mod:`attnsim.verify.teeth`) runs every twin and expects the check to fail.
Twins live here, one module per checker module, never as switches in production code.

Every twin declares its ``kind`` (one of :data:`KINDS`): what it breaks, and so what the check must
fail on. Only the kinds in :data:`REFUSAL_KINDS` may be stopped by a refusal (the referee's own
limits); every other twin counts as caught only when the check's verdict fails. A refusal twin counts as caught
only when refused: a referee that lets the overstep through is itself broken.
"""

from __future__ import annotations

import importlib
import pkgutil
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from attnsim.sim.errors import AttnsimError

BreakFn = Callable[[], AbstractContextManager[Any]]


KINDS: dict[str, str] = {
    "construction": "the construction computes something else (its output, its plan, its random draws)",
    "oracle": "the oracle (the small model the construction calls) computes something else",
    "reference": "the reference the output is compared with computes something else",
    "formula": "a formula, bound or constant read from paper_refs or theory is mistranscribed",
    "ledger": "the ledger records a count wrongly",
    "agreement": "the agreement test (tolerance or exactness) is looser than the claim needs",
    "oracle-limit": "a referee's limit (call length, machine memory) is lifted and the construction uses it: "
                    "the check's own counts must see it",
    "referee": "the construction oversteps a referee's limit (call length, machine memory) that is left in "
               "place: the referee must refuse it",
    "growth": "a bounded resource is inflated by a factor that grows with N",
    "plan": "a call plan (blocks, offsets, pads, rounds) breaks an obligation the prover checks",
}
REFUSAL_KINDS = frozenset({"referee"})


@dataclass(frozen=True)
class Twin:
    """One broken variant of ``claim``: ``breaks()`` applies the break while the check runs; ``kind``
    (a key of :data:`KINDS`) says what it breaks."""

    claim: str
    name: str
    what: str
    breaks: BreakFn
    params: dict[str, Any] = field(default_factory=dict)
    numerics: str | None = None
    kind: str = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"twin {self.claim}:{self.name}: kind must be one of {', '.join(KINDS)}, "
                             f"got {self.kind!r}")

    @property
    def may_refuse(self) -> bool:
        """Whether a refusal (an AttnsimError or an assertion) counts as catching this twin."""
        return self.kind in REFUSAL_KINDS


_TWINS: dict[tuple[str, str], Twin] = {}


TwinKind = Literal["construction", "oracle", "reference", "formula", "ledger", "agreement", "oracle-limit", "referee",
                   "growth", "plan"]
"""The ``kind`` of a twin, as a type (the keys of :data:`KINDS`)."""

GROWTH_PREFIX = "growth:"
"""A ``growth`` twin is named ``growth:<resource>`` (``growth:<resource>@<sweep>`` in a parameter sweep): the
bounded resource of its claim that it inflates."""


class TwinError(AttnsimError):
    """A twin declared wrongly (an unknown kind, a growth twin not named after a bounded resource): one line,
    raised when it is registered."""


def check_declaration(claim: str, name: str, kind: str) -> None:
    """Refuse a twin whose ``kind`` is not one of :data:`KINDS`, or a growth twin whose name does not say which
    bounded resource of ``claim`` it inflates (``growth:<resource>``)."""
    if kind not in KINDS:
        raise TwinError(f"twin {claim}:{name}: kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if kind != "growth":
        return
    from attnsim.paper_refs import get as get_claim

    try:
        bounded = [r for r, res in get_claim(claim).resources.items() if res.bound]
    except KeyError:
        raise TwinError(f"twin {claim}:{name}: {claim} has no entry in paper_refs") from None
    if not name.startswith(GROWTH_PREFIX) or name[len(GROWTH_PREFIX):].split("@")[0] not in bounded:
        raise TwinError(f"twin {claim}:{name}: a growth twin is named {GROWTH_PREFIX}<resource> (or "
                        f"{GROWTH_PREFIX}<resource>@<sweep>), <resource> one of "
                        f"{', '.join(GROWTH_PREFIX + r for r in bounded) or '(none: the claim bounds nothing)'}")


def twin(claim: str, name: str, what: str, *, kind: TwinKind, params: dict[str, Any] | None = None,
         numerics: str | None = None) -> Callable[[BreakFn], BreakFn]:
    """Register a context-manager factory as a broken variant of ``claim`` (``what``: one line;
    ``kind``: a key of :data:`KINDS`, checked here with :func:`check_declaration`)."""
    check_declaration(claim, name, kind)

    def register(fn: BreakFn) -> BreakFn:
        key = (claim, name)
        if key in _TWINS:
            raise TwinError(f"two twins named {name!r} for {claim}")
        _TWINS[key] = Twin(claim, name, what, fn, dict(params or {}), numerics, kind=kind)
        return fn

    return register


def all_twins() -> list[Twin]:
    """Every registered twin, sorted by claim then name."""
    import attnsim.verify.twins as pkg
    from attnsim.verify.registry import all_checkers

    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{mod.name}")
    all_checkers()  # a paper's own modules register its twins beside its checkers
    return [_TWINS[k] for k in sorted(_TWINS)]
