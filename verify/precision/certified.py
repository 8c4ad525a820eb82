"""Certified bits needed: the smallest ``arb:BITS`` at which every ball certifies the target error.

A run in ``arb:BITS`` (``sim/numerics/arb.py``) proves a bound on the row-wise relative error of its output
against the exact-real output (``certify.certified_bits``). The search finds the smallest BITS whose bound
meets the target, 2^-target_bits, on every sampled row:

1. one probe at target_bits + 40 measures what the construction loses, loss = BITS − certified bits (ball
   arithmetic loses a nearly fixed number of bits, whatever BITS is);
2. the guess target_bits + ⌈loss⌉ is probed, then the search gallops (1, 2, 4 ... bits) up from a failing width or
   down from a passing one, and bisects to the smallest BITS that certifies with BITS − 1 failing.

What it proves: at the answer every ball certifies the target (a theorem about this run). What it measures:
at BITS − 1 ball arithmetic does not (another arithmetic might; this is the precision the certificate needs,
an upper bound on the precision the construction needs).

The target is either fixed (``2^-20``: the same at every N) or ``2^-N`` (the rebuttal's 1/2^N), given as a
:class:`Target`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from attnsim.sim.numerics.arb import MAX_BITS, MIN_BITS, Arb, ArbSpec
from attnsim.verify.precision.certify import certified_bits
from attnsim.verify.precision.constructions import Setup, run_construction
from attnsim.verify.registry import UsageError

FIRST_MARGIN = 40
"""Bits above the target of the first probe (enough for the decodes' loss on the default cases)."""


@dataclass(frozen=True)
class Target:
    """A relative error target 2^-bits, fixed or growing with N (``per_N``: 2^-N)."""

    fixed_bits: float | None = None
    per_N: bool = False

    @classmethod
    def parse(cls, text: str) -> Target:
        """``2^-N`` or ``2^-B`` (B > 0), refused with one line naming ``--target``."""
        t = text.strip().replace(" ", "")
        if t in ("2^-N", "2**-N"):
            return cls(per_N=True)
        for head in ("2^-", "2**-"):
            if t.startswith(head):
                try:
                    b = float(t[len(head):])
                except ValueError:
                    break
                if 0 < b <= MAX_BITS - FIRST_MARGIN and math.isfinite(b):
                    return cls(fixed_bits=b)
        raise UsageError(f"--target: expected 2^-N (the rebuttal's 1/2^N) or 2^-B with 0 < B <= "
                         f"{MAX_BITS - FIRST_MARGIN}, e.g. 2^-20; got {text!r}")

    def bits(self, N: int) -> float:
        """−log2 of the target at N."""
        return float(N) if self.per_N else float(self.fixed_bits or 0)

    @property
    def text(self) -> str:
        """The target as the CLI writes it."""
        return "2^-N" if self.per_N else f"2^-{self.fixed_bits:g}"


@dataclass
class CertifiedNeed:
    """The search's answer at one N: the smallest certifying BITS (None past :data:`MAX_BITS`) and every probe."""

    N: int
    construction: str
    decode: str
    target_bits: float
    bits: int | None
    probes: dict[int, float] = field(default_factory=dict)  # BITS -> certified bits
    seconds: float = 0.0

    @property
    def loss(self) -> float | None:
        """BITS − certified bits at the answer: what the construction's arithmetic loses."""
        return None if self.bits is None else self.bits - self.probes[self.bits]

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"N": self.N, "construction": self.construction, "decode": self.decode,
                "target_bits": self.target_bits, "bits": self.bits, "loss": self.loss,
                "probes": {str(k): v for k, v in sorted(self.probes.items())}, "seconds": round(self.seconds, 2)}


def certified_at(setup: Setup, construction: str, decode: str, bits: int) -> float:
    """The certified bits of one ``arb:bits`` run of ``construction`` on the setup's sampled rows."""
    Y = run_construction(construction, Arb(ArbSpec(bits)), setup, decode=decode)
    return certified_bits(Y)["certified_bits"]


def certified_need(setup: Setup, construction: str, target_bits: float, decode: str = "paper") -> CertifiedNeed:
    """The smallest BITS whose balls certify 2^-target_bits on every sampled row (module docstring)."""
    start = time.perf_counter()
    need = CertifiedNeed(setup.N, construction, decode, target_bits, None)

    def ok(b: int) -> bool:
        if b not in need.probes:
            need.probes[b] = certified_at(setup, construction, decode, b)
        return need.probes[b] >= target_bits

    first = min(MAX_BITS, max(MIN_BITS, math.ceil(target_bits) + FIRST_MARGIN))
    ok(first)
    loss = max(0.0, first - need.probes[first])  # a certificate of inf bits (exact balls) loses nothing
    guess = min(MAX_BITS, max(MIN_BITS, math.ceil(target_bits + loss)))
    lo, hi = MIN_BITS - 1, None  # lo fails (or lies below the range), hi certifies
    if ok(guess):
        hi, step = guess, 1
        while hi - step >= MIN_BITS and ok(hi - step):  # gallop down while it still certifies
            hi, step = hi - step, 2 * step
        lo = max(lo, hi - step)
    else:
        lo, step = guess, 1
        while lo < MAX_BITS:  # gallop up until it certifies
            c = min(MAX_BITS, lo + step)
            if ok(c):
                hi = c
                break
            lo, step = c, 2 * step
    while hi is not None and hi - lo > 1:  # bisect: lo fails (or is below MIN_BITS), hi certifies
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    need.bits = hi
    need.seconds = time.perf_counter() - start
    return need
