"""The effective parameter count's cross-check by perturbation (tint.size; the count itself is found by structure in
``attnsim.sim.tint.network_effective``).

Every module layer of the network is run once on an input and its window recorded as it enters the layer. Then each
entry of each module object (every array entry, and a gate's scalar offsets) is changed by one, alone, and the
object is run again on every window it serves: the entry *changes an output* when some routed output (the token
rows' [0, D), a descent's whole prefix window) differs. This is the structural count's question asked of one input;
an input holds every kind of row (prefix, training and test tokens) and every position (as many tokens as the
auxiliary model has positions), so the two counts are comparable entry by entry (:func:`compare`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.cases import Case
from attnsim.sim.tint.layers import Gate
from attnsim.sim.tint.network import Combine, ModuleLayer, Network, _apply, _context, build_tint, read_out
from attnsim.sim.tint.network_effective import Marks, effective_marks
from attnsim.sim.tint.network_io import input_embedding
from attnsim.sim.tint.network_size import arrays


def network_and_windows(c: Case, ar: Any, n_train: int, seed: int = 0) -> tuple[Network, list[tuple[ModuleLayer,
                                                                                                     np.ndarray]], Any]:
    """The case's network, and every module layer with the stream as it enters that layer (random tokens, as many
    as the auxiliary model has positions, the first ``n_train`` of them training tokens)."""
    w = am.init_weights(c.aux, ar, c.seed)
    net = build_tint(c.aux, c.tint, ar, wte=w["wte"], wpe=w["wpe"])
    ids = np.random.default_rng(seed).integers(0, c.aux.vocab, c.aux.positions)
    x = input_embedding(net, w, ids, n_train)
    ctx, K = _context(net, x), net.geo.K
    uses = []
    for lay in net.layers:
        if isinstance(lay, ModuleLayer):
            uses.append((lay, x.copy()))
            _apply(net, lay, x, ctx)
        elif isinstance(lay, Combine):
            acc = x[K:, net.reg(lay.terms[0])]
            for t in lay.terms[1:]:
                acc = acc + x[K:, net.reg(t)]
            x[K:, net.reg(lay.out)] = acc
        else:
            read_out(net, lay, x)
    return net, uses, ctx


def _routed(net: Network, lay: ModuleLayer, x: np.ndarray, ctx: Any) -> np.ndarray:
    y = x.copy()
    _apply(net, lay, y, ctx)
    K = net.geo.K
    parts = [y[K:, net.reg(lay.out)].ravel()]
    if lay.prefix_out:
        parts.append(y[:K, net.slot(lay.prefix)].ravel())
    return np.concatenate(parts)


def _gates(obj: Any) -> Iterator[Gate]:
    if isinstance(obj, Gate):
        yield obj
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from _gates(getattr(obj, f.name))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _gates(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _gates(v)


def perturbation_marks(net: Network, uses: list[tuple[ModuleLayer, np.ndarray]], ctx: Any,
                       ops: set[int] | None = None) -> Marks:
    """Per array of the module objects (those of ``ops`` by id, or all): the entries whose change by one alone
    changes a routed output of some layer the object serves. A gate's offsets are keyed as the structure keys them."""
    by_op: dict[int, list[tuple[ModuleLayer, np.ndarray]]] = {}
    for lay, x in uses:
        by_op.setdefault(id(lay.op), []).append((lay, x))
    marks: Marks = {}
    for op_id, served in by_op.items():
        if ops is not None and op_id not in ops:
            continue
        base = [_routed(net, lay, x, ctx) for lay, x in served]

        def changes() -> bool:
            return any(not np.array_equal(_routed(net, lay, x, ctx), b) for (lay, x), b in zip(served, base))

        op = served[0][0].op
        for a in arrays(op):
            if a.dtype == object or id(a) in marks:
                continue
            mask = np.zeros(a.shape, dtype=bool)
            flat = a.reshape(-1)
            for i in range(flat.size):
                old = flat[i]
                flat[i] = old + 1
                try:
                    mask.flat[i] = changes()
                finally:
                    flat[i] = old
            marks[id(a)] = (a, mask)
        for gate in _gates(op):
            for name, arr in (("a0", gate.a_old), ("a1", gate.a_new)):
                old = getattr(gate, name)
                setattr(gate, name, old + 1)
                try:
                    hit = changes()
                finally:
                    setattr(gate, name, old)
                marks[(id(gate), id(arr))] = (np.array([old], dtype=object), np.array([hit]))
    return marks


def compare(structure: Marks, perturbed: Marks) -> dict[str, int]:
    """Entry counts of the arrays both cover: effective by each, and the two kinds of disagreement."""
    out = {"entries": 0, "structure": 0, "perturbation": 0, "structure_only": 0, "perturbation_only": 0}
    for key, (a, p) in perturbed.items():
        s = structure.get(key, (a, np.zeros(p.shape, dtype=bool)))[1]
        out["entries"] += int(p.size)
        out["structure"] += int(s.sum())
        out["perturbation"] += int(p.sum())
        out["structure_only"] += int((s & ~p).sum())
        out["perturbation_only"] += int((p & ~s).sum())
    return out


def cross_check(c: Case, ar: Any, n_train: int, ops: set[int] | None = None) -> dict[str, int]:
    """The structural and the perturbation count of ``c``'s network side by side (:func:`compare`)."""
    net, uses, ctx = network_and_windows(c, ar, n_train)
    return compare(effective_marks(net), perturbation_marks(net, uses, ctx, ops))


def main() -> None:
    """Print the cross-check of the ``tiny-relu`` case per module object, and the totals (a few CPU minutes)."""
    from collections import Counter

    from attnsim.sim.tint.arith import get_arith
    from attnsim.sim.tint.cases import case

    net, uses, ctx = network_and_windows(case("tiny-relu"), get_arith("float64"), n_train=4)
    structure = effective_marks(net)
    total: Counter[str] = Counter()
    seen: set[int] = set()
    for lay, _ in uses:
        if id(lay.op) in seen:
            continue
        seen.add(id(lay.op))
        row = compare(structure, perturbation_marks(net, uses, ctx, {id(lay.op)}))
        total.update(row)
        print(lay.tag, getattr(lay.op, "name", ""), row, flush=True)
    print("total", dict(total))


if __name__ == "__main__":
    main()
