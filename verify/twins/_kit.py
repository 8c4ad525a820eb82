"""Small tools the ANNA and TinT twins share: patch a loaded paper_refs formula, scale ledger entries,
and wrap a function so that its arguments or its result are broken on the way through."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from typing import Any, Callable, Iterator
from unittest import mock

from attnsim.paper_refs import get as get_claim
from attnsim.sim.ledger import Ledger


@contextmanager
def formula_shifted(claim_id: str, resource: str, shift: str = "1") -> Iterator[None]:
    """The check reads ``resource``'s exact formula of ``claim_id`` as ``(formula) + shift``."""
    claim = get_claim(claim_id)
    res = claim.resources[resource]
    broken_res = dataclasses.replace(res, exact=f"({res.exact}) + {shift}")
    broken = dataclasses.replace(claim, resources={**claim.resources, resource: broken_res})

    def lookup(cid: str) -> Any:
        return broken if cid == claim_id else get_claim(cid)

    with mock.patch("attnsim.verify.check.get_claim", lookup):
        yield


@contextmanager
def upper_replaced(claim_id: str, resource: str, upper: str) -> Iterator[None]:
    """The check reads ``resource``'s proof's upper formula of ``claim_id`` as ``upper``."""
    claim = get_claim(claim_id)
    broken_res = dataclasses.replace(claim.resources[resource], upper=upper)
    broken = dataclasses.replace(claim, resources={**claim.resources, resource: broken_res})

    def lookup(cid: str) -> Any:
        return broken if cid == claim_id else get_claim(cid)

    with mock.patch("attnsim.verify.check.get_claim", lookup):
        yield


@contextmanager
def ledger_scaled(kind: str, scale: Callable[[int], int], tag_prefix: str = "", first_only: bool = False
                  ) -> Iterator[None]:
    """Ledger entries of ``kind`` (tag starting with ``tag_prefix``) are recorded with ``scale(amount)``;
    ``first_only``: only the first such entry of each ledger."""
    original = Ledger.record
    seen: set[int] = set()

    def record(self: Ledger, kind_: str, tag: str, **kw: Any) -> Any:
        if kind_ == kind and tag.startswith(tag_prefix) and not (first_only and id(self) in seen):
            seen.add(id(self))
            kw["amount"] = scale(kw.get("amount", 1))
        return original(self, kind_, tag, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@contextmanager
def wrapped(target: str, *, args: Callable[..., tuple[tuple, dict]] | None = None,
            result: Callable[[Any], Any] | None = None) -> Iterator[None]:
    """Patch the function at ``target`` (a dotted path): ``args(*a, **kw)`` rewrites its arguments,
    ``result(r)`` rewrites what it returns."""
    module, name = target.rsplit(".", 1)
    original = getattr(__import__(module, fromlist=[name]), name)

    def broken(*a: Any, **kw: Any) -> Any:
        if args is not None:
            a, kw = args(*a, **kw)
        out = original(*a, **kw)
        return out if result is None else result(out)

    with mock.patch(target, broken):
        yield
