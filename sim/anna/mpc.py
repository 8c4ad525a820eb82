"""A referee MPC machine (the MPC model of Thm 4.1 / 4.2): P machines with s words of local memory each.

A protocol runs in rounds. In a round every machine computes, from its memory only, a list of
messages ``(destination, record)``; a record is a tuple whose entries are words. The machine
**refuses** the round (:class:`MPCLimitError`, nothing delivered) when any machine would send more
than s words or receive more than s words (:class:`MPCLoadError`), or addresses a machine that does not exist. After a
delivered round a machine's memory is exactly what it received (a machine keeps data by sending it
to itself, which counts against both limits): this is the strict reading of "messages land in the
recipients' memory" and the one Sanford et al. use (MachineIn^{r+1} = received messages).

Ledger entries: ``mpc_round`` (one per round), ``mpc_message`` (words moved that round),
``mpc_load`` (largest number of words any machine received that round; read the max over rounds),
``mpc_record`` (the longest record sent that round, in words; read the max over rounds),
``mpc_machine`` (one the first time a machine holds data: the number of machines used).
"""

from __future__ import annotations

import gc
from functools import wraps
from typing import Any, Callable, Iterable, Sequence, TypeVar, cast

from attnsim.sim.anna.errors import require
from attnsim.sim.errors import AttnsimError
from attnsim.sim.ledger import Ledger

Record = tuple
Message = tuple[int, Record]
Step = Callable[[int, list[Record]], Iterable[Message]]
Keep = Callable[[int, list[Record]], Sequence[Record]]
"""The records a machine sends itself in a round (``MPC.round``'s ``keep``)."""
Deliver = Callable[[list[list[Message]], int], list[list[Record]]]
"""Turns every machine's outbox into every machine's inbox for round r (default: direct delivery)."""
Place = Callable[[dict[int, list[Record]]], dict[int, list[Record]]]
"""Moves the input onto the machines: gets the placement, returns what each machine holds (default: as given)."""


_TUPLE = {tuple}
F = TypeVar("F", bound=Callable[..., Any])


class MPCLimitError(AttnsimError):
    """A round broke the MPC rules (too many words sent or received, or a bad destination)."""


class MPCLoadError(MPCLimitError):
    """A machine would send, receive or hold more than s words: the one refusal a randomized protocol may meet on
    an unlucky draw (its loads hold with high probability), where a bad destination is a fault on every draw."""


def _older_objects_frozen(step: F) -> F:
    """``step`` (a round or a local step) with every object made before it frozen (:func:`gc.freeze`).

    Rounds and local steps make a tuple or more a record and free them by reference counting. Each time the
    cycle collector runs its full pass it would walk every object the process made before as well (a loaded
    theory, sympy's caches: most of the heap), again and again over a protocol's many rounds; frozen, they
    are skipped, and thawed after the step. Nothing is left uncollected: frozen garbage is collected after the
    thaw. A freeze already in force (a caller's) stays as it is."""

    @wraps(step)
    def run(*args: Any, **kwargs: Any) -> Any:
        if gc.get_freeze_count():
            return step(*args, **kwargs)
        gc.freeze()
        try:
            return step(*args, **kwargs)
        finally:
            gc.unfreeze()

    return cast(F, run)


def words(records: Iterable[Record]) -> int:
    """Words in a list of records (one word per tuple entry)."""
    return sum(map(len, records))


class MPC:
    """P machines with local memory s words; see the module docstring for the rules."""

    def __init__(self, machines: int, memory: int, *, ledger: Ledger | None = None, tag: str = "mpc",
                 deliver: Deliver | None = None, place: Place | None = None) -> None:
        """A machine with ``machines`` processors of ``memory`` words each; rounds go to ``ledger``."""
        require(
            isinstance(machines, int) and machines >= 1, "machines", f"must be a positive integer, got {machines!r}"
        )
        require(
            isinstance(memory, int) and memory >= 1, "s", f"local memory must be a positive integer, got {memory!r}"
        )
        self.P, self.s = machines, memory
        self.ledger = ledger if ledger is not None else Ledger()
        self.tag = tag
        self.deliver = deliver or direct_delivery
        self.place = place
        self.memory: list[list[Record]] = [[] for _ in range(machines)]
        self._sizes: list[tuple[int, int] | None] = [None] * machines
        """(words, longest record) of a machine's memory as a direct round delivered it (None: count it)."""
        self.rounds = 0
        self._used: set[int] = set()

    def load(self, placement: dict[int, Sequence[Record]]) -> None:
        """Place the input (no round): ``placement[machine]`` = its records, at most s words each.

        With a ``place`` hook the machines hold what the hook returns (an input layer that moves the
        records there, Lemma B.5), which must be the same placement for the protocol to be right.
        """
        for m, recs in placement.items():
            self._check_machine(m, "load")
            if words(recs) > self.s:
                raise MPCLoadError(f"{self.tag} load: machine {m} would hold {words(recs)} words > s = {self.s}")
        placed = self.place({m: list(recs) for m, recs in placement.items()}) if self.place else placement
        for m, recs in placed.items():
            self.memory[m] = list(recs)
            self._sizes[m] = None
            self._mark(m)

    @_older_objects_frozen
    def round(self, step: Step, *, label: str = "", keep: Keep | None = None) -> None:
        """Run one round: ``step(machine, memory)`` yields the machine's messages.

        ``keep(machine, memory)``, when given, lists records the machine sends itself before the messages of
        ``step`` (the same round as a step that yields them first as ``(machine, record)``; they count
        against both limits), counted as one block; a machine that keeps its whole memory as a direct round
        delivered it reuses the words and longest record counted then. One pass over the messages checks
        every limit, counts the loads and fills the inboxes (those of direct delivery; a ``deliver`` hook gets
        the outboxes), so a round costs a few operations a message.
        """
        r = self.rounds
        name = label or "unnamed"
        P, s, used = self.P, self.s, self._used
        direct = self.deliver is direct_delivery
        outboxes: list[list[Message]] = [] if direct else [[] for _ in range(P)]
        inbox: list[list[Record]] = [[] for _ in range(P)]
        loads = [0] * P
        longest = 0
        received = [0] * P  # the longest record each machine receives
        memory, held = self.memory, self._sizes
        for m in range(P):
            mem = memory[m]
            if not mem and m not in used:
                continue
            kept = keep(m, mem) if keep is not None else ()
            kept_words = 0
            if kept:
                known = held[m] if kept is mem else None
                if known is None:
                    if set(map(type, kept)) != _TUPLE:
                        kept = [tuple(rec) for rec in kept]
                    own = list(map(len, kept))
                    known = sum(own), max(own)
                kept_words, kept_longest = known
                if kept_longest > longest:
                    longest = kept_longest
                if kept_longest > received[m]:
                    received[m] = kept_longest
            sending = step(m, mem)
            out = [(dest, rec if type(rec) is tuple else tuple(rec)) for dest, rec in sending] if sending else []
            sizes = [len(rec) for _, rec in out] if out else out
            sent = kept_words + sum(sizes) if out else kept_words
            if sent > s:
                raise MPCLoadError(f"{self.tag} round {r} ({name}): machine {m} sends {sent} words > s = {s}")
            if kept:
                loads[m] += kept_words
                if direct:
                    inbox[m].extend(kept)
            if out:
                longest = max(longest, max(sizes))
                for (dest, rec), n in zip(out, sizes):
                    if type(dest) is not int or not 0 <= dest < P:
                        self._check_machine(dest, f"round {r} ({name}): machine {m} sends to")
                    loads[dest] += n
                    if direct:
                        inbox[dest].append(rec)
                        if n > received[dest]:
                            received[dest] = n
            if not direct:
                outboxes[m] = [(m, rec) for rec in kept] + out if kept else out
        worst = max(range(P), key=loads.__getitem__)
        if loads[worst] > s:
            raise MPCLoadError(f"{self.tag} round {r} ({name}): machine {worst} receives {loads[worst]} words "
                                f"> s = {s}")
        if not direct:
            inbox = self.deliver(outboxes, r)
        moved = sum(loads)
        self.memory = inbox
        self._sizes = list(zip(loads, received)) if direct else [None] * P
        for m, box in enumerate(inbox):
            if box and m not in used:
                self._mark(m)
        self.rounds += 1
        where = f"{self.tag}.{label or 'round'}"
        self.ledger.record("mpc_round", where, round=r)
        self.ledger.record("mpc_message", where, round=r, amount=moved)
        self.ledger.record("mpc_load", where, round=r, amount=loads[worst])
        self.ledger.record("mpc_record", where, round=r, amount=longest)

    @_older_objects_frozen
    def local(self, fn: Callable[[int, list[Record]], list[Record]], machines: range | None = None) -> None:
        """Local computation (free in MPC): replace each machine's memory by ``fn(machine, memory)``; with
        ``machines``, only those machines compute (the others keep their memory, already within s)."""
        if machines is None:
            machines = range(self.P)
        for end in (machines[0], machines[-1]) if machines else ():
            self._check_machine(end, "local step on")
        for m in machines:
            new = list(fn(m, self.memory[m]))
            if words(new) > self.s:
                raise MPCLoadError(f"{self.tag} local step: machine {m} would hold {words(new)} words > s = {self.s}")
            self.memory[m] = new
            self._sizes[m] = None

    def _check_machine(self, m: int, what: str) -> None:
        if not (isinstance(m, int) and 0 <= m < self.P):
            raise MPCLimitError(f"{self.tag} {what} machine {m!r}, which does not exist (P = {self.P})")

    def _mark(self, m: int) -> None:
        if m not in self._used:
            self._used.add(m)
            self.ledger.record("mpc_machine", f"{self.tag}.machine", round=self.rounds)


def direct_delivery(outboxes: list[list[Message]], r: int) -> list[list[Record]]:
    """Every message lands in its destination's inbox, in order of sender, then of sending."""
    inbox: list[list[Record]] = [[] for _ in outboxes]
    for out in outboxes:
        for dest, rec in out:
            inbox[dest].append(rec)
    return inbox
