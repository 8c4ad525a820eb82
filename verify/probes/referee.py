"""Probes of the exact comparator and the ledger, which every check's verdict reads.

- The comparator (:func:`attnsim.verify.agreement.compare`) in each exact numerics must call two outputs
  that differ by 2^-200 in one entry different, and identical outputs equal: exact means ``==``, and a
  tolerance of any size would let the difference through.
- The ledger (:class:`attnsim.sim.ledger.Ledger`) with ``compact=True`` merges runs of like entries; every
  summary (totals by kind and by tag, rounds, flops, the widest shape) must be the same as without it.
"""

from __future__ import annotations

from fractions import Fraction

from attnsim.sim.ledger import Ledger
from attnsim.sim.numerics import get_numerics
from attnsim.verify.agreement import compare
from attnsim.verify.probes import probe

EXACT_NUMERICS = ("exact", "exact:64:seeded", "symbolic")
TINY = Fraction(1, 2 ** 200)


def comparator_probe(numerics: str) -> str | None:
    """None when ``compare`` in ``numerics`` tells a 2^-200 difference apart and calls equal outputs equal."""
    nm = get_numerics(numerics, 0)
    values = [[Fraction(1, 3), Fraction(-5, 7)], [Fraction(2), Fraction(0)]]
    ref = nm.array(values, "reference")
    same = nm.array(values, "output")
    off = nm.array([[values[0][0] + TINY, values[0][1]], values[1]], "output")
    if not compare(same, ref, nm, nm, None).agree:
        return f"{numerics}: equal outputs were called different"
    ag = compare(off, ref, nm, nm, None)
    if ag.agree:
        return f"{numerics}: outputs that differ by 2^-200 in one entry were called equal"
    return None


for _nm in EXACT_NUMERICS:
    probe(f"comparator.{_nm}", "referee", f"the comparator in {_nm} numerics rejects a difference of 2^-200 and "
          "accepts equal outputs")(lambda _nm=_nm: comparator_probe(_nm))


def _spend(ledger: Ledger) -> None:
    """A run of spends with repeats (which compaction merges) and changes of tag, round, shape and kind."""
    for rnd in (1, 2):
        for i in range(5):
            ledger.record("oracle", "probe.step1", round=rnd, shape=(4, 3), flops=7)
        ledger.record("oracle", "probe.step2", round=rnd, shape=(4, 3), flops=5, amount=3)
        ledger.record("oracle", "probe.step2", round=rnd, shape=(5, 3), flops=5)
        for i in range(4):
            ledger.record("processing", "probe.combine", round=rnd, shape=(4, 2), flops=2, amount=2)
    ledger.record("hash", "probe.hash", amount=11)


@probe("ledger.compaction", "referee", "a compacting ledger keeps every total: by kind, by tag, rounds, flops and "
       "the widest shape, as one that keeps every entry")
def ledger_probe() -> str | None:
    """None when compaction changes no summary and does merge entries."""
    full, compact = Ledger(), Ledger(compact=True)
    _spend(full)
    _spend(compact)
    summaries = {
        "by kind": (Ledger.by_kind, ()), "oracle by tag": (Ledger.by_tag, ("oracle",)),
        "processing total": (Ledger.total, ("processing",)), "rounds": (Ledger.rounds, ()),
        "flops": (Ledger.flops, ()), "widest call": (Ledger.max_shape, ()),
    }
    for what, (f, args) in summaries.items():
        a, b = f(full, *args), f(compact, *args)
        if a != b:
            return f"{what}: {b} with compaction, {a} without"
    if len(compact.entries) >= len(full.entries):
        return f"compaction merged nothing ({len(compact.entries)} entries of {len(full.entries)})"
    if full.total("oracle") != 2 * (5 + 3 + 1) or full.total() != 2 * (5 + 3 + 1 + 8) + 11:
        return f"the ledger's totals are not the amounts recorded ({full.by_kind()})"
    return None


@probe("ledger.no_negative", "referee", "the ledger refuses a negative amount")
def negative_probe() -> str | None:
    """None when a negative amount is refused."""
    try:
        Ledger().record("oracle", "probe", amount=-1)
    except ValueError:
        return None
    return "a negative amount was recorded"

