"""The ledger: an append-only record of everything a construction spends.

Every oracle call, every MPC round, every hash evaluation and every piece of arithmetic done
outside an oracle ("processing", two_heads §1.1) is written here as an :class:`Entry`.
Counts reported by ``attnsim check`` are read from the ledger and nowhere else, so a construction
cannot report a count it did not spend.

Kinds of entry:

* ``"oracle"``      – one call to a small transformer (``attnsim.sim.oracle``);
* ``"processing"``  – work outside the oracle, e.g. the combination step of eq. (1) in
                      two_heads.lemma_3_1 or applying a layer MLP token-wise;
* any other string  – resources of the other papers (``"hash"``, ``"mpc_round"``, ...).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable


@dataclass(frozen=True)
class Entry:
    """One spend: what (``kind``), why (``tag``, e.g. ``"lemma_3_1.step1"``), when (``round``)."""

    kind: str
    tag: str
    round: int
    shape: tuple[int, ...] = ()
    flops: int = 0
    amount: int = 1
    info: tuple[tuple[str, Any], ...] = ()


@dataclass
class Ledger:
    """Append-only list of :class:`Entry`; summaries are computed, never stored."""

    entries: list[Entry] = field(default_factory=list)
    compact: bool = False
    """Merge an entry into the previous one when kind, tag, round, shape and info agree (amounts and flops
    add up): every summary stays the same, and a long round of like calls takes O(1) memory, not O(calls)."""

    def record(
        self,
        kind: str,
        tag: str,
        *,
        round: int = 0,
        shape: Iterable[int] = (),
        flops: int = 0,
        amount: int = 1,
        **info: Any,
    ) -> Entry:
        """Append one entry (``amount`` units of ``kind`` under ``tag``) and return it."""
        if amount < 0:
            raise ValueError(f"ledger amount must be >= 0, got {amount}")
        entry = Entry(kind, tag, int(round), tuple(int(s) for s in shape), int(flops), int(amount),
                      tuple(sorted(info.items())))
        last = self.entries[-1] if self.compact and self.entries else None
        if last is not None and (last.kind, last.tag, last.round, last.shape, last.info) == \
                (entry.kind, entry.tag, entry.round, entry.shape, entry.info):
            entry = replace(last, flops=last.flops + entry.flops, amount=last.amount + entry.amount)
            self.entries[-1] = entry
            return entry
        self.entries.append(entry)
        return entry

    def total(self, kind: str | None = None, tag_prefix: str = "") -> int:
        """Sum of ``amount`` over entries of ``kind`` (all kinds if None) whose tag starts with ``tag_prefix``."""
        return sum(e.amount for e in self._select(kind, tag_prefix))

    def by_tag(self, kind: str | None = None) -> dict[str, int]:
        """Total amount per tag, of one kind or of all."""
        counts: Counter[str] = Counter()
        for e in self._select(kind, ""):
            counts[e.tag] += e.amount
        return dict(sorted(counts.items()))

    def by_kind(self) -> dict[str, int]:
        """Total amount per kind."""
        counts: Counter[str] = Counter()
        for e in self.entries:
            counts[e.kind] += e.amount
        return dict(sorted(counts.items()))

    def rounds(self, kind: str = "oracle", tag_prefix: str | tuple[str, ...] = "") -> int:
        """Number of distinct rounds in which ``kind`` entries were made (whose tag starts with ``tag_prefix``, or
        with one of several)."""
        return len({e.round for e in self._select(kind, tag_prefix)})

    def flops(self, kind: str | None = None) -> int:
        """Total flops, of one kind or of all."""
        return sum(e.flops for e in self._select(kind, ""))

    def max_shape(self, kind: str = "oracle") -> tuple[int, ...]:
        """Elementwise maximum over the shapes of ``kind`` entries (e.g. longest call, widest call)."""
        shapes = [e.shape for e in self.entries if e.kind == kind and e.shape]
        if not shapes:
            return ()
        width = max(len(s) for s in shapes)
        return tuple(max(s[i] for s in shapes if len(s) > i) for i in range(width))

    def _select(self, kind: str | None, tag_prefix: str | tuple[str, ...]) -> Iterable[Entry]:
        return (e for e in self.entries
                if (kind is None or e.kind == kind) and e.tag.startswith(tag_prefix))
