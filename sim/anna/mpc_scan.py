"""An f-ary Hillis-Steele scan: inclusive prefix sums on an MPC of small memory and small capacity.

A protocol for the regimes of Thm B.2 / Cor B.9 (memory s = O(N^(1/5 - delta)), a handful of words) and of
Lemma B.13 (a (gamma, eps, rho)-MPC: each machine talks to at most k machines a round). N integers lie on P
machines in blocks of b = N / P, input i as its own one-word record (an input layer then carries one word a token,
not the whole block); machine m keeps one record (w, x_1, ..., x_b) of b + 1 words, w the sum of
the blocks m - f^r + 1 .. m after r rounds (w = its own block's sum at the start). In round r machine m sends
its record to itself and the word w to m + j f^r for j = 1 .. f - 1 (those below P); then w grows by the words
it received. After R = ceiling(log_f P) rounds w is the sum of blocks 0 .. m, and output i of block m is
w - (block sum) + (prefix of the block up to i).

Every round a machine sends and receives at most b + f words, and talks to at most f machines (itself
included): s = b + f words and capacity k = f suffice, both independent of N.

With ``split`` a machine keeps its state as b + 1 records of one word (w first, then x_1 .. x_b, in that order
to itself) and sends w to the others as the two-word record (w, 0): several records travel to one destination
in a round (a bundle, Lemma B.13), and s = b + 1 + 2 (f - 1) words.
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.anna.errors import as_matrix, require
from attnsim.sim.anna.mpc import MPC, Deliver, Place
from attnsim.sim.anna.mpc_protocols import Outputs, ProtocolRun
from attnsim.sim.ledger import Ledger


def scan_rounds(machines: int, fan: int) -> int:
    """ceiling(log_fan machines): the rounds after which every window covers blocks 0 .. m."""
    rounds, span = 0, 1
    while span < machines:
        rounds, span = rounds + 1, span * fan
    return rounds


def scan_memory(block: int, fan: int, split: bool = False) -> int:
    """Words a machine sends and receives in a round (module docstring)."""
    return block + 1 + 2 * (fan - 1) if split else block + fan


def scan_protocol(x: object, *, machines: int, fan: int, split: bool = False, memory: int | None = None,
                  ledger: Ledger | None = None, place: Place | None = None,
                  deliver: Deliver | None = None) -> ProtocolRun:
    """Inclusive prefix sums of ``x`` by the ``fan``-ary scan (module docstring); s = :func:`scan_memory` by default."""
    xs = as_matrix(x, "x")
    require(xs.shape[1] == 1 and np.issubdtype(xs.dtype, np.integer), "x", "expected one column of integers")
    N = xs.shape[0]
    require(isinstance(machines, int) and machines >= 1 and N % machines == 0, "P",
            f"must be a positive integer dividing N = {N}, got {machines!r}")
    require(isinstance(fan, int) and fan >= 2, "fan", f"must be an integer >= 2, got {fan!r}")
    b = N // machines
    need = scan_memory(b, fan, split)
    s = need if memory is None else memory
    require(isinstance(s, int) and s >= need, "s", f"local memory {s!r} is below the {need} words the scan needs")
    values = [int(v) for v in xs[:, 0]]
    mpc = MPC(machines, s, ledger=ledger, tag="scan", deliver=deliver, place=place)
    mpc.load({m: [(v,) for v in values[m * b:(m + 1) * b]] for m in range(machines)})  # input i: its own record
    mpc.local(lambda m, mem: _pack([sum(r[0] for r in mem), *(r[0] for r in mem)], split))
    span = 1
    for r in range(scan_rounds(machines, fan)):
        mpc.round(_send_window(fan, span, machines, split), label=f"scan.round{r}")
        mpc.local(_add_received(b, split))
        span *= fan
    outputs: Outputs = {}
    for m, mem in enumerate(mpc.memory):
        window, *block = _unpack(mem, b, split)
        acc = window - sum(block)
        out = {}
        for t, v in enumerate(block):
            acc += v
            out[m * b + t] = (acc,)
        outputs[m] = out
    return ProtocolRun(outputs, mpc.rounds, machines, s, b)


def _pack(state: list[int], split: bool) -> list[tuple]:
    """A machine's state (w, x_1 .. x_b) as its records: one, or one a word."""
    return [(v,) for v in state] if split else [tuple(state)]


def _unpack(mem: list[tuple], b: int, split: bool) -> list[int]:
    """The state back from the records a machine kept (a received w is one word, or two when split)."""
    if split:
        return [r[0] for r in mem if len(r) == 1]
    return list(next(r for r in mem if len(r) == b + 1))


def _send_window(fan: int, span: int, machines: int, split: bool):
    def step(m, mem):
        state = mem if split else [next(r for r in mem if len(r) > 1 or len(mem) == 1)]
        word = (state[0][0], 0) if split else (state[0][0],)
        children = [[(m + j * span, word)] for j in range(1, fan) if m + j * span < machines]
        groups = [[(m, rec) for rec in state]] + children
        turn = m % len(groups)  # the order of an outbox is the protocol's choice: rotated (the records kept stay in
        # order), so one receiver's senders share heads (Thm B.2's and Lemma B.13's heads then average several)
        return [msg for group in groups[turn:] + groups[:turn] for msg in group]
    return step


def _add_received(b: int, split: bool):
    def local(m, mem):
        w, *block = _unpack(mem, b, split)
        got = sum(r[0] for r in mem if len(r) == (2 if split else 1))
        return _pack([w + got, *block], split)
    return local
