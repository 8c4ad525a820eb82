"""Protocols that run side by side on disjoint machine ranges of one referee MPC machine, in the same rounds.

A *part* is a generator over one range of machines that yields its next action: :class:`Round`
(one MPC round: a step and the records each machine keeps) or :class:`Local` (free local
computation). :func:`parallel` merges parts into one part that advances them in lockstep: all local
actions first, then one MPC round that runs every part's step on its own machines (machines that no
running part owns keep what they hold). A part that has finished leaves its machines idle. So the
rounds of parts run in parallel are the most any of them takes, as on a real MPC machine, and the
referee still checks every machine's words in every round. :func:`run` drives a part on an
:class:`~attnsim.sim.anna.mpc.MPC`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generator, Iterable, Sequence, Union

from attnsim.sim.anna.mpc import MPC, Message, Record

Step = Callable[[int, list[Record]], Iterable[Message]]
Keep = Callable[[int, list[Record]], Sequence[Record]]


@dataclass(frozen=True)
class Round:
    """One MPC round on the machines ``machines``: ``keep`` is sent to self, then ``step``'s messages."""

    machines: range
    step: Step
    keep: Keep
    label: str


@dataclass(frozen=True)
class Local:
    """Free local computation on ``machines``: each memory becomes ``fn(machine, memory)``."""

    machines: range
    fn: Callable[[int, list[Record]], list[Record]]


Action = Union[Round, Local]
Part = Generator[Action, None, None]


def keep_all(m: int, mem: list[Record]) -> list[Record]:
    """Every record stays where it is."""
    return mem


def parallel(parts: Sequence[Part]) -> Part:
    """The parts (on disjoint ranges) advanced in lockstep: see the module docstring."""
    pending: dict[int, Action] = {}
    for i, part in enumerate(parts):
        action = next(part, None)
        if action is not None:
            pending[i] = action
    while pending:
        locals_ = [i for i, a in pending.items() if isinstance(a, Local)]
        if locals_:
            for i in locals_:
                yield pending[i]
                action = next(parts[i], None)
                if action is None:
                    del pending[i]
                else:
                    pending[i] = action
            continue
        rounds = [pending[i] for i in sorted(pending)]
        owner: dict[int, Round] = {}
        for r in rounds:
            for m in r.machines:
                owner[m] = r
        lo = min(r.machines.start for r in rounds)
        hi = max(r.machines.stop for r in rounds)

        def step(m: int, mem: list[Record], owner: dict[int, Round] = owner) -> Iterable[Message]:
            r = owner.get(m)
            return r.step(m, mem) if r is not None else []

        def keep(m: int, mem: list[Record], owner: dict[int, Round] = owner) -> Sequence[Record]:
            r = owner.get(m)
            return r.keep(m, mem) if r is not None else mem

        labels = sorted({r.label for r in rounds})
        yield Round(range(lo, hi), step, keep, labels[0] if len(labels) == 1 else "+".join(labels))
        for i in list(pending):
            action = next(parts[i], None)
            if action is None:
                del pending[i]
            else:
                pending[i] = action


def run(mpc: MPC, part: Part) -> None:
    """Drive ``part`` on ``mpc``: every Round is one MPC round, every Local a local step."""
    for action in part:
        if isinstance(action, Local):
            mpc.local(action.fn, machines=action.machines)
        else:
            machines, step, keep = action.machines, action.step, action.keep
            mpc.round(lambda m, mem, machines=machines, step=step: step(m, mem) if m in machines else [],
                      keep=lambda m, mem, machines=machines, keep=keep: keep(m, mem) if m in machines else mem,
                      label=action.label)
