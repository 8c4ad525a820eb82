"""Probes of the theory: known pairs of a count and a bound that the containment routine must decide right.

The check of every bounded resource asks :func:`attnsim.theory.symbolic.analyse` whether the exact count
lies in the bound's class (``lim count/bound`` finite) and whether it is tight (the limit positive). A
routine that answers "limit 0" for everything would let every bound pass, and nothing else would notice:
a looser bound is always met. These pairs have answers known by hand:

- N² against O(N): outside (the limit is infinite);
- N log N against O(N log N): tight, leading constant 1;
- 3n² + n against O(n²): tight, leading constant 3;
- N against O(N²): within, not tight (the limit is 0).
"""

from __future__ import annotations

import sympy as sp

from attnsim.paper_refs import Claim, Resource
from attnsim.theory.symbolic import LOOSE, OUTSIDE, TIGHT, analyse
from attnsim.verify.probes import probe

PAIRS = (
    ("N**2", "N", "N", OUTSIDE, None),
    ("N*log(N)", "N*log(N)", "N", TIGHT, 1),
    ("3*n**2 + n", "n**2", "n", TIGHT, 3),
    ("N", "N**2", "N", LOOSE, 0),
)
"""(exact count, bound, limit variable, the verdict, the leading constant where it is finite)."""


def pair_probe(exact: str, bound: str, var: str, verdict: str, constant: int | None) -> str | None:
    """None when the theory decides ``exact`` against O(``bound``) as ``verdict`` with ``constant``."""
    claim = Claim(f"probe.{exact}_vs_{bound}", "probe", "", "claim", "", limit=var,
                  resources={"count": Resource("count", bound=bound, exact=exact)})
    t = analyse(claim, "count")
    if t.verdict != verdict:
        return f"{exact} against O({bound}) as {var} grows: {t.verdict!r} (limit {t.leading_constant}), not {verdict!r}"
    if constant is not None and sp.simplify(t.leading_constant - constant) != 0:
        return f"{exact} against O({bound}): leading constant {t.leading_constant}, not {constant}"
    return None


for _pair in PAIRS:
    probe(f"theory.{_pair[0]}_vs_O({_pair[1]})".replace(" ", ""), "theory",
          f"{_pair[0]} against O({_pair[1]}) is {_pair[3]}"
          + (f" (limit {_pair[4]})" if _pair[4] is not None else ""))(lambda p=_pair: pair_probe(*p))
