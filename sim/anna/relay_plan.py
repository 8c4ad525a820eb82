"""The relay's integer plan (anna.thm_4_1 via Lemma B.12 / B.13), written once and generic over an int-like type.

Every integer decision of the relay in :mod:`attnsim.sim.anna.relay_routing` and
:mod:`attnsim.sim.anna.mpc_to_anna` is made here: the digit of a token id along a dimension, the
id with one digit replaced, where a deal and a move send a unit, which head carries a bundle, which
receiver a count message reaches, the proved capacity s + 2 k D, and how a unit's (source,
sequence, index) is packed into one number and read back. The functions take an ``ops`` object (as
``sim/two_heads/plan.py``'s): :data:`INT` for Python ints, :data:`ARRAY` for numpy arrays (what the
construction runs), and the prover (``attnsim prove anna``) passes solver terms, so the plan proved for
every k, D, P and s is the plan that runs. ``place`` is k^t, the weight of digit t (the caller
computes it; the prover keeps it symbolic).
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import numpy as np

from attnsim.sim.two_heads.plan import INT, IntOps


class ArrayOps(IntOps):
    """:class:`~attnsim.sim.two_heads.plan.IntOps` with elementwise conjunction and disjunction (numpy arrays)."""

    def all(self, *cs: Any) -> Any:
        """Elementwise conjunction."""
        return reduce(np.logical_and, cs)

    def any(self, *cs: Any) -> Any:
        """Elementwise disjunction."""
        return reduce(np.logical_or, cs)


ARRAY = ArrayOps()
__all__ = ["ARRAY", "INT", "capacity", "deal_member", "deal_target", "digit", "head_between", "head_receiver",
           "move_target", "pack_tag", "unpack_tag", "with_digit"]


def digit(ops: Any, x: Any, place: Any, base: Any) -> Any:
    """Digit t of ``x`` in base k, where ``place`` = k^t."""
    return ops.mod(ops.div(x, place), base)


def with_digit(ops: Any, x: Any, place: Any, base: Any, value: Any) -> Any:
    """``x`` with digit t (``place`` = k^t) replaced by ``value`` (0 <= value < k)."""
    return x + (value - digit(ops, x, place, base)) * place


def move_target(ops: Any, tok: Any, dest: Any, place: Any, base: Any) -> Any:
    """The move layer of level l (``place`` = k^l): the group member whose digit l is the destination's."""
    return with_digit(ops, tok, place, base, digit(ops, dest, place, base))


def deal_member(ops: Any, pooled: Any, base: Any) -> Any:
    """A deal hands the group's ``pooled``-th unit of a class to the member whose digit is pooled mod k."""
    return ops.mod(pooled, base)


def deal_target(ops: Any, tok: Any, pooled: Any, place: Any, base: Any) -> Any:
    """The deal layer along dimension t (``place`` = k^t): the unit with pooled index ``pooled`` goes to
    the member of ``tok``'s group whose digit t is :func:`deal_member`."""
    return with_digit(ops, tok, place, base, deal_member(ops, pooled, base))


def head_between(ops: Any, x: Any, y: Any, place: Any, base: Any) -> Any:
    """The head that carries x's bundle for y (same group along t): digit(y) - digit(x) mod k."""
    return ops.mod(ops.div(y, place) - ops.div(x, place), base)


def head_receiver(ops: Any, x: Any, place: Any, base: Any, head: Any) -> Any:
    """The member of x's group along t that head ``head`` (1 <= head < k) carries x's bundle to."""
    return with_digit(ops, x, place, base, ops.mod(digit(ops, x, place, base) + head, base))


def capacity(memory: Any, base: Any, hops: Any) -> Any:
    """Units a token may hold or send in one bundle: s + 2 k D (the load bound of docs/anna_mpc_to_anna.md)."""
    return memory + 2 * base * hops


def pack_tag(src: Any, seq: Any, idx: Any, memory: Any) -> Any:
    """A unit's (source, sequence, index), each sequence and index below s, as one number."""
    return (src * memory + seq) * memory + idx


def unpack_tag(ops: Any, tag: Any, memory: Any) -> tuple[Any, Any, Any]:
    """(source, sequence, index) of :func:`pack_tag`'s number."""
    rest = ops.div(tag, memory)
    return ops.div(rest, memory), ops.mod(rest, memory), ops.mod(tag, memory)
