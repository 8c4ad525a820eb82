"""The obligations of ``attnsim prove tint``: TinT's stream layout (tint.sgd_step, §2.7) for every width.

:func:`~attnsim.sim.tint.network.lay_out` is the walk :func:`~attnsim.sim.tint.network.build_tint` runs to
place the registers and list the layers; here it runs with symbolic widths (D, the one-hot width P, the
vocabulary V as z3 terms, S = D/K ≥ 3 rows per prefix, TinT's width H = (S + 1)·D as ``Geometry.H``
computes it) and placeholder modules, for each loop shape (auxiliary layers, simulated layers, SGD
steps, reuse flags) of :data:`SHAPES`. Per shape:

* ``registers`` — no two registers share a column, every register has width ≥ 1 and starts at 0 or after
  (z3, every D, P, V);
* ``frame`` — in every module layer, the content registers ([0, c)) and the memory registers
  ([H − m, H)) of :func:`~attnsim.sim.tint.network.frame` are disjoint and inside the H-wide rows, and the
  D columns the layer writes fit (z3, every D, K and S ≥ 3);
* ``written before read`` — every register a layer reads (content, memory, a sum's terms, a read-out's
  source, its targets and loss mask) was written by an earlier layer or is an input
  (:data:`~attnsim.sim.tint.network.INPUT_REGISTERS`), and every prefix slot a layer reads is one the input
  embedding fills (a walk over the layer list: register names do not depend on the widths);
* ``written before read (every layer index)`` — the same of one forward and one backward block built with a
  symbolic layer index (:class:`Index`): they read from outside themselves only h_i, the incoming gradient
  and what layer i's forward block wrote, and only layer i's prefix slots.

The sequence length n and the head counts do not enter the layout (rows and head splits live inside the
modules), so the widths, n and heads are symbolic or absent; the loop shape is enumerated.
"""

from __future__ import annotations

import itertools
from typing import Any

import z3

from attnsim.sim.tint.builder import _sets_of_layer
from attnsim.sim.tint.network import (
    INPUT_REGISTERS,
    Combine,
    ModuleLayer,
    StreamPlan,
    StreamShape,
    _backward_layer,
    _forward_layer,
    frame,
    lay_out,
)
from attnsim.verify.prove.obligations import Obligation, Query

CLAIM = "tint.sgd_step"
SIZES = {n: z3.Int(n) for n in ("D", "K", "S", "P", "V")}
SHAPES = tuple(StreamShape(layers, steps, start, True, True)
               for layers in (1, 2, 3) for start in range(layers) for steps in (1, 2)) + (
    StreamShape(2, 2, 1, False, False),)
"""Every loop shape up to 3 auxiliary layers and 2 SGD steps; the reuse flags name module copies only (the
registers and the layers' reads and writes are the same), so they are varied once."""


STATEMENT = ("integer plan proved for every width: the stream layout, each loop shape up to 3 layers and 2 steps "
             "(the modules checked at instances)")
SCOPE = "every D, K with S >= 3, P, V; this loop shape"


class _Modules:
    """Placeholder modules: the walk only passes them through to the layers it lists."""

    def __getattr__(self, name: str) -> tuple[None, None]:
        return None, None


def plan(shape: StreamShape) -> StreamPlan:
    """The stream plan of ``shape`` with symbolic widths."""
    stub = _Modules()
    return lay_out(StreamPlan(SIZES["D"]), stub, stub, stub, shape, SIZES["P"], SIZES["V"])


def _hyps() -> list[Any]:
    D, K, S, P, V = SIZES.values()
    return [K >= 1, S >= 3, D == S * K, P >= 1, V >= 1]


def _H() -> Any:
    return (SIZES["S"] + 1) * SIZES["D"]  # Geometry.H: (D/K + 1)·D


def label(shape: StreamShape) -> str:
    """A shape as a variant label."""
    return (f"layers={shape.layers} simulated={shape.layers - shape.start} steps={shape.steps} "
            f"reuse={'f' if shape.reuse_forward else '-'}{'b' if shape.reuse_backward else '-'}")


def reads(lay: Any) -> tuple[str, ...]:
    """The registers a layer reads."""
    if isinstance(lay, ModuleLayer):
        return lay.content + lay.memory
    if isinstance(lay, Combine):
        return lay.terms
    return (lay.src, "target", "loss_mask") if lay.grad else (lay.src,)


def _registers(shape: StreamShape) -> Query:
    regs = list(plan(shape).registers.values())
    goal = [z3.And(w >= 1, a >= 0) for a, w in regs]
    goal += [z3.Or(a1 + w1 <= a2, a2 + w2 <= a1) for (a1, w1), (a2, w2) in itertools.combinations(regs, 2)]
    return _hyps(), z3.And(*goal), dict(SIZES)


def _frame(shape: StreamShape) -> Query:
    p = plan(shape)
    H = _H()
    goal = []
    for lay in p.layers:
        if isinstance(lay, ModuleLayer):
            width = lambda names: z3.Sum([z3.IntVal(0)] + [p.registers[r][1] for r in names])  # noqa: E731
            (c0, c1), (m0, m1) = frame(H, width(lay.content), width(lay.memory))
            goal += [c0 >= 0, c1 <= m0, m1 <= H, p.registers[lay.out][1] <= H]
    return _hyps(), z3.And(*goal), dict(SIZES)


def first_unwritten(shape: StreamShape) -> tuple[int, str] | None:
    """The first (layer index, register) read before any write, or a prefix slot no input fills; None if none."""
    p = plan(shape)
    written = set(INPUT_REGISTERS)
    slots = {f"{i}.{name}" for i in range(shape.layers) for name in _sets_of_layer()} | {"lnf"}
    for n, lay in enumerate(p.layers):
        missing = [r for r in reads(lay) if r not in written]
        if isinstance(lay, ModuleLayer) and lay.prefix is not None and lay.prefix not in slots:
            missing.append(lay.prefix)
        if missing:
            return n, missing[0]
        written.add(lay.out)
    return None


WALK = "written before read"
BLOCKS = "written before read (every layer index)"


class Index:
    """A symbolic auxiliary layer index i (plus an offset): names built from it read ``Li.q``, ``hi+1``, ``i.ln1``.
    Names are injective in the index, so what holds of the names of layer i holds of every layer."""

    def __init__(self, offset: int = 0) -> None:
        """The index i + ``offset``."""
        self.offset = offset

    def __add__(self, n: int) -> "Index":
        return Index(self.offset + n)

    def __format__(self, spec: str) -> str:
        return "i" if self.offset == 0 else f"i{self.offset:+d}"


def _block(build: Any) -> tuple[set[str], set[str], set[str]]:
    """(registers read before the block writes them, registers written, prefix slots read) of one block."""
    p = StreamPlan(SIZES["D"])
    build(p)
    written: set[str] = set()
    outside: set[str] = set()
    for lay in p.layers:
        outside |= {r for r in reads(lay) if r not in written}
        written.add(lay.out)
    slots = {lay.prefix for lay in p.layers if isinstance(lay, ModuleLayer) and lay.prefix is not None}
    return outside, written, slots


def blocks_read_after_write() -> tuple[str, str] | None:
    """For a symbolic layer index i: the forward block of layer i reads from outside itself only its input
    h_i; the backward block reads only its incoming gradient, h_i and registers the forward block of layer i
    wrote; both read only layer i's prefix slots. Returns the first (block, register) that breaks this."""
    i, stub = Index(), _Modules()
    slots = {f"{i}.{name}" for name in _sets_of_layer()}
    f_out, f_written, f_slots = _block(lambda p: _forward_layer(p, stub, ("fwd", 0), i, f"h{i}", f"h{i + 1}"))
    b_out, _, b_slots = _block(lambda p: _backward_layer(p, stub, ("bwd", 0, 0), i, "d.h"))
    for block, extra, allowed in (("forward", f_out, {f"h{i}"}), ("backward", b_out, {"d.h", f"h{i}"} | f_written)):
        bad = sorted(extra - allowed)
        if bad:
            return block, bad[0]
    bad_slots = sorted((f_slots | b_slots) - slots)
    return ("slots", bad_slots[0]) if bad_slots else None


def _no_query() -> Query:
    raise TypeError("'written before read' is a walk over the layer list (first_unwritten), not a solver query")


def obligations() -> list[Obligation]:
    """Every shape's ``registers``, ``frame`` and ``written before read`` (module docstring)."""
    out = []
    for shape in SHAPES:
        params = {"shape": shape, "scope": SCOPE}
        out.append(Obligation(CLAIM, "registers", label(shape), lambda shape=shape: _registers(shape), params))
        out.append(Obligation(CLAIM, "frame", label(shape), lambda shape=shape: _frame(shape), params))
        out.append(Obligation(CLAIM, WALK, label(shape), _no_query, {**params, WALK: True}))
    out.append(Obligation(CLAIM, BLOCKS, "symbolic layer index i", _no_query, {BLOCKS: True}))
    return out
