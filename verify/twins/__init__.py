"""Broken twins: deliberately wrong variants of what each claim's check relies on.

A twin breaks one thing — a construction's block boundary, a term of a recombination, the oracle's
limit, the ledger, a count formula, the agreement test — by patching it while the claim's check
runs; ``attnsim teeth`` (:mod:`attnsim.verify.teeth`) runs every twin and expects the check to fail.
Twins live here, one module per checker module, never as switches in production code.
"""

from __future__ import annotations

import importlib
import pkgutil
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Callable

BreakFn = Callable[[], AbstractContextManager[Any]]


@dataclass(frozen=True)
class Twin:
    """One broken variant of ``claim``: ``breaks()`` applies the break while the check runs."""

    claim: str
    name: str
    what: str
    breaks: BreakFn
    params: dict[str, Any] = field(default_factory=dict)
    numerics: str | None = None


_TWINS: dict[tuple[str, str], Twin] = {}


def twin(claim: str, name: str, what: str, *, params: dict[str, Any] | None = None,
         numerics: str | None = None) -> Callable[[BreakFn], BreakFn]:
    """Register a context-manager factory as a broken variant of ``claim`` (``what``: one line)."""

    def register(fn: BreakFn) -> BreakFn:
        key = (claim, name)
        if key in _TWINS:
            raise RuntimeError(f"two twins named {name!r} for {claim}")
        _TWINS[key] = Twin(claim, name, what, fn, dict(params or {}), numerics)
        return fn

    return register


def all_twins() -> list[Twin]:
    """Every registered twin, sorted by claim then name."""
    import attnsim.verify.twins as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{mod.name}")
    return [_TWINS[k] for k in sorted(_TWINS)]
