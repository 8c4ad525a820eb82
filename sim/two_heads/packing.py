"""two_heads.lemma_3_3 — one oracle call runs H'·L' independent single-head jobs.

Every head of every layer of the oracle is used as an independent single-head worker (Lemma
3.3). Slot (h, ℓ) of a call holds one :class:`~attnsim.sim.two_heads.jobs.HeadJob`; head h of
oracle layer ℓ computes it.

**Residual stream with output slots (our choice; not in the paper).** The paper's transformer has
no residual connection (Def 2.2), yet the inputs of the jobs of layers 2..L' have to survive layer 1
unchanged, which plain softmax attention cannot do (docs/reconstructions.md, "A residual stream for the packed
oracle"). attnsim therefore uses an oracle with a residual stream (``OracleSpec(residual=True)``): the layer MLP ψ_ℓ
reads the layer input and the heads' outputs, copies the input through and writes the decoded output of job (h, ℓ)
into that job's own output slot. The stream of one call is laid out head-major::

    [ head 1: in(1,1) … in(1,L') out(1,1) … out(1,L') | head 2: … | … | head H': … ]

with input slots of width w (the widest job) and output slots of width o (the widest job output),
so head h — which reads the h-th column block of width L'(w + o) — sees exactly its own jobs, and in
layer ℓ its W^Q, W^K, W^V are zero except on input slot ℓ. The call width is H'·L'·(w + o); for the
block jobs of Lemma 3.1 (w = 2d/H + 2, o ≤ d/H + 1) that is O(d·H'·L'/H), and the ledger records
it with every call. Unused slots get all-zero heads whose output ψ ignores.

The abstract model ("H'L' jobs per call") is kept beside the real one: every
packed job is also written to the ledger as a ``"job"`` entry, so a check can report the number of
single-head jobs and the calls the abstract model would spend (⌈jobs/(H'L')⌉ per round) next to
the calls the oracle actually ran.

Rows: all jobs of a call share the positions. A causal oracle lets a job be shorter than the call
(rows appended at the end are invisible to earlier queries); an unmasked oracle needs all jobs of a
call to have the same length, and a shorter job is refused with a clear error (``uniform_rows``
in ``multi_layer.py`` makes Lemma 3.1's jobs equally long).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from attnsim.sim.errors import AttnsimError
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer
from attnsim.sim.two_heads import plan as P
from attnsim.sim.two_heads.jobs import HeadJob


class PackingError(AttnsimError):
    """Jobs that cannot share a packed call (names what differs)."""


def slot_widths(jobs: Sequence[HeadJob]) -> tuple[int, int]:
    """(w, o): the widest job input and the widest job output among ``jobs``."""
    return max(j.width for j in jobs), max(j.out_width for j in jobs)


def _layer_mlp(slots: list[HeadJob | None], heads: int, layers: int, layer: int, w: int, o: int):
    """ψ_ℓ with a residual stream: copy the layer input, write each decoded job output into its slot
    (``plan.slot_columns``)."""

    def psi(nm: Numerics, Hout: Array, Xin: Array) -> Array:
        out = Xin.copy()
        col = 0
        for h in range(heads):
            job = slots[P.slot_index(h, layer, layers)]
            width = job.out_width if job is not None else 1
            part = Hout[:, col:col + width]
            col += width
            if job is None:
                continue
            dec = job.decode(nm, part) if job.decode is not None else part
            if dec.shape[1] != job.out_width:
                raise PackingError(f"job '{job.tag}': its decode returns {dec.shape[1]} columns, "
                                   f"its output slot holds {job.out_width}")
            start = P.slot_columns(h, layer, layers, w, o)[1]
            out[:, start:start + dec.shape[1]] = dec
        return out

    return psi


def _slot_head(nm: Numerics, job: HeadJob | None, layers: int, layer: int, w: int, o: int) -> OracleHead:
    """Head weights reading only input slot ``layer`` of the head's column block (``plan.head_block``;
    an oracle head sees its block only, so its weights' rows are offsets inside it)."""
    lo, hi = P.head_block(0, layers, w, o)
    if job is None:
        z = nm.zeros((hi - lo, 1))
        return OracleHead(z, z, z)
    first = P.slot_columns(0, layer, layers, w, o)[0] - lo
    rows = slice(first, first + job.width)
    out = []
    for W in (job.WQ, job.WK, job.WV):
        Wslot = nm.zeros((hi - lo, W.shape[1]))
        Wslot[rows] = W
        out.append(Wslot)
    return OracleHead(*out, rope_dims=job.rope_dims)


def packed_call(nm: Numerics, jobs: Sequence[HeadJob], heads: int, layers: int, causal: bool,
                w: int, o: int, tag: str) -> tuple[OracleCall, list[HeadJob | None]]:
    """One oracle call running ``jobs`` (at most heads·layers of them) in slots (h, ℓ), head-major."""
    slots: list[HeadJob | None] = list(jobs) + [None] * (heads * layers - len(jobs))
    rows = max(int(j.Z.shape[0]) for j in jobs)
    if not causal:
        uneven = [j for j in jobs if j.Z.shape[0] != rows]
        if uneven:
            raise PackingError(f"packing: job '{uneven[0].tag}' has {uneven[0].Z.shape[0]} rows, another has {rows}; "
                               "an unmasked oracle cannot pad a job (extra rows would be extra keys)")
    X = nm.zeros((rows, P.head_block(heads - 1, layers, w, o)[1]))
    for k, job in enumerate(jobs):
        _, h, layer = P.pack_slot(P.INT, k, heads * layers, layers)
        start = P.slot_columns(h, layer, layers, w, o)[0]
        X[:job.Z.shape[0], start:start + job.width] = job.Z
    oracle_layers = tuple(
        OracleLayer(tuple(_slot_head(nm, slots[P.slot_index(h, layer, layers)], layers, layer, w, o)
                          for h in range(heads)),
                    _layer_mlp(slots, heads, layers, layer, w, o))
        for layer in range(layers))
    return OracleCall(tag, X, oracle_layers), slots


def _read_slot(out: Array, job: HeadJob, k: int, heads: int, layers: int, w: int, o: int) -> Array:
    """Job k's output in its call's output: the job's rows of its output slot (``plan.pack_slot``,
    ``plan.slot_columns``)."""
    _, h, layer = P.pack_slot(P.INT, k, heads * layers, layers)
    start = P.slot_columns(h, layer, layers, w, o)[1]
    return out[:job.Z.shape[0], start:start + job.out_width]


def run_packed(oracle: Oracle, jobs: Iterable[HeadJob]) -> list[Array]:
    """A :class:`~attnsim.sim.two_heads.jobs.JobRunner`: H'·L' jobs per call, all calls in one round.

    Needs an oracle with a residual stream (see the module docstring). Each job is also recorded in
    the ledger (kind ``"job"``) for the abstract "H'L' jobs per call" count.
    """
    jobs = list(jobs)
    if not jobs:
        return []
    spec = oracle.spec
    if not spec.residual:
        raise AttnsimError("packing (two_heads.lemma_3_3): needs an oracle with a residual stream "
                           "(OracleSpec(residual=True)); the paper's model has none, see packing.py")
    per_call = spec.heads * spec.layers
    w, o = slot_widths(jobs)
    groups: list[list[HeadJob]] = [[] for _ in range(P.pack_count(P.INT, len(jobs), per_call))]
    for k, job in enumerate(jobs):
        groups[P.pack_slot(P.INT, k, per_call, spec.layers)[0]].append(job)
    calls = [packed_call(oracle.nm, g, spec.heads, spec.layers, spec.causal, w, o, _group_tag(g))[0]
             for g in groups]
    outs = oracle.run(calls)
    for k, job in enumerate(jobs):
        oracle.ledger.record("job", job.tag, round=oracle.round, shape=job.Z.shape,
                             slot=P.pack_slot(P.INT, k, per_call, spec.layers)[1:])
    return [_read_slot(out, job, k, spec.heads, spec.layers, w, o)
            for g, out in zip(groups, outs) for k, job in enumerate(g)]


def _group_tag(group: Sequence[HeadJob]) -> str:
    """The call's tag: the common prefix of its jobs' tags up to the last step name, e.g. 'thm_3_4.L0'."""
    tags = [j.tag for j in group]
    prefix = tags[0].split(".")
    for t in tags[1:]:
        parts = t.split(".")
        n = 0
        while n < min(len(prefix), len(parts)) and prefix[n] == parts[n]:
            n += 1
        prefix = prefix[:n]
    return ".".join(prefix + ["packed"]) if prefix else "packed"


def abstract_calls(job_rounds: Sequence[int], per_call: int) -> int:
    """Calls of the abstract model (Lemma 3.3, "H'L' jobs per call"): ⌈jobs/(H'L')⌉ per round of jobs."""
    counts: dict[int, int] = {}
    for r in job_rounds:
        counts[r] = counts.get(r, 0) + 1
    return sum(math.ceil(c / per_call) for c in counts.values())

