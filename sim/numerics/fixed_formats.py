"""Number formats of fixed bit width and rounding into them, vectorised on float64 carriers.

Two families (two_heads §1.1 gives no rounding rule, so a fixed-bit-width mode has to choose one;
docs/reconstructions.md, "Exact arithmetic on a score grid"):

* :class:`FloatFormat` ``E.M`` — binary floating point with E exponent bits and M stored mantissa
  bits (precision M + 1 with the hidden bit), subnormals, IEEE-style: the all-ones exponent is
  reserved, so the largest finite value is (2 − 2^-M)·2^(2^(E−1) − 1). The suffix ``fn`` (as in
  ``4.3fn``) is the OCP FP8 / ml_dtypes ``float8_e4m3fn`` convention: the all-ones exponent holds
  finite values too, except all-ones mantissa (NaN), so e4m3 tops out at 448.
* :class:`FixedFormat` ``qI.F`` — two's complement with I integer bits *including the sign bit*
  and F fraction bits (apytypes' ``int_bits``/``frac_bits``): values k·2^-F with
  −2^(I−1) ≤ k·2^-F ≤ 2^(I−1) − 2^-F.

attnsim never produces inf or NaN: a rounded value beyond the largest finite one either saturates
to it or raises :class:`NumericsError` (the ``overflow`` option of the backend). This differs from
ml_dtypes, whose casts overflow to inf (IEEE types) or NaN (``float8_e4m3fn``); on every value that
does not overflow the two agree bit for bit (tests/test_fixed_formats.py).

Rounding rules: ``rne`` round to nearest, ties to even (default); ``rz`` truncate toward zero;
``sr`` stochastic — away from zero with probability equal to the discarded fraction of an ulp,
from a seeded generator. Carriers are float64 arrays; a float format with M ≤ 52 and E ≤ 11 and a
fixed format with I + F ≤ 53 fit exactly in them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from attnsim.sim.numerics.base import NumericsError

ROUNDINGS = ("rne", "rz", "sr")

FLOAT_NAMES = {"fp32": "8.23", "bf16": "8.7", "fp16": "5.10", "fp8_e4m3": "4.3fn", "e4m3": "4.3fn",
               "fp8_e5m2": "5.2", "e5m2": "5.2"}


@dataclass(frozen=True)
class FloatFormat:
    """Binary floating point with ``exp_bits`` exponent and ``man_bits`` stored mantissa bits."""
    exp_bits: int
    man_bits: int
    finite_top: bool = False  # the "fn" convention (no inf; NaN only at all-ones)

    def __post_init__(self) -> None:
        if not 2 <= self.exp_bits <= 11:
            raise NumericsError(f"float:{self.label}: exponent bits must be in 2..11, got {self.exp_bits}",
                                param="numerics")
        if not 1 <= self.man_bits <= 52:
            raise NumericsError(f"float:{self.label}: mantissa bits must be in 1..52, got {self.man_bits}",
                                param="numerics")

    @property
    def label(self) -> str:
        """The format's name, e.g. ``4.3fn``."""
        return f"{self.exp_bits}.{self.man_bits}{'fn' if self.finite_top else ''}"

    @property
    def bits(self) -> int:
        """Precision in bits (stored mantissa plus the hidden bit)."""
        return self.man_bits + 1

    @property
    def width(self) -> int:
        """Total bits: sign, exponent and mantissa."""
        return 1 + self.exp_bits + self.man_bits

    @property
    def emin(self) -> int:
        """The smallest normal exponent."""
        return 2 - 2 ** (self.exp_bits - 1)

    @property
    def spacing_floor(self) -> float:
        """The subnormal spacing 2^(emin − man): the gap between neighbours below 2^emin."""
        return 2.0 ** (self.emin - self.man_bits)

    @functools.cached_property
    def max_value(self) -> float:
        """The largest finite value."""
        emax = 2 ** (self.exp_bits - 1) - 1
        if self.finite_top:
            return float(np.ldexp(2.0 - 2.0 ** (1 - self.man_bits), emax + 1))
        return float(np.ldexp(2.0 - 2.0 ** -self.man_bits, emax))

    def round(self, x: np.ndarray, mode: str, rng: np.random.Generator | None) -> np.ndarray:
        """x rounded into this format with an unbounded exponent above (overflow is the caller's)."""
        return self.round_with_max(x, mode, rng)[0]

    def round_with_max(self, x: np.ndarray, mode: str,
                       rng: np.random.Generator | None) -> tuple[np.ndarray, float]:
        """(x rounded, max |x|), in few passes over the bits of x (inf/NaN show as a non-finite max)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        b = x.view(np.int64)
        mag = b & _ABS
        big = float(mag.max().view(np.float64)) if mag.size else 0.0
        shift = 52 - self.man_bits
        r = x
        if shift:
            if mode == "rne":
                t = b >> shift
                t &= 1
                t += (np.int64(1) << (shift - 1)) - 1
                t += b
            elif mode == "sr":
                t = rng.integers(0, 1 << shift, size=x.shape, dtype=np.int64)
                t += b
            else:
                t = b.copy()
            t &= ~np.int64((1 << shift) - 1)
            r = t.view(np.float64)
        # 0 < |x| < 2^emin: the format's subnormal range, a fixed grid (zeros already round to 0)
        mag -= 1
        if (mag.view(np.uint64) < np.uint64(((self.emin + 1023) << 52) - 1)).any():
            tiny = (np.abs(x) < 2.0 ** self.emin) & (x != 0)
            r = np.array(r, copy=True)
            q = np.ldexp(x[tiny], self.man_bits - self.emin)
            r[tiny] = np.ldexp(_round_int(q, mode, rng), self.emin - self.man_bits)
        return r, big


_ABS = np.int64(0x7FFF_FFFF_FFFF_FFFF)


@dataclass(frozen=True)
class FixedFormat:
    """Two's-complement fixed point q``int_bits``.``frac_bits`` (the sign counts as an integer bit)."""
    int_bits: int
    frac_bits: int

    def __post_init__(self) -> None:
        if self.int_bits < 1 or self.frac_bits < 0:
            raise NumericsError(f"fixed:{self.label}: need I >= 1 (the sign bit) and F >= 0", param="numerics")
        if self.int_bits + self.frac_bits > 53:
            raise NumericsError(f"fixed:{self.label}: I + F = {self.int_bits + self.frac_bits} exceeds the 53 bits "
                                "a float64 carrier holds exactly", param="numerics")

    @property
    def label(self) -> str:
        """The format's name, e.g. ``q8.8``."""
        return f"q{self.int_bits}.{self.frac_bits}"

    @property
    def bits(self) -> int:
        """Precision in bits: the fraction bits (resolution 2^-F)."""
        return self.frac_bits

    @property
    def width(self) -> int:
        """Total bits."""
        return self.int_bits + self.frac_bits

    @property
    def spacing_floor(self) -> float:
        """The resolution 2^-F: the gap between neighbours everywhere."""
        return 2.0 ** -self.frac_bits

    @property
    def max_value(self) -> float:
        """The largest representable value."""
        return float(2.0 ** (self.int_bits - 1) - 2.0 ** -self.frac_bits)

    @property
    def min_value(self) -> float:
        """The most negative representable value."""
        return float(-(2.0 ** (self.int_bits - 1)))

    def round_with_max(self, x: np.ndarray, mode: str,
                       rng: np.random.Generator | None) -> tuple[np.ndarray, float]:
        """``x`` rounded into the format, and the largest |x| before rounding."""
        x = np.asarray(x, dtype=np.float64)
        return self.round(x, mode, rng), float(np.abs(x).max()) if x.size else 0.0

    def round(self, x: np.ndarray, mode: str, rng: np.random.Generator | None) -> np.ndarray:
        """``x`` rounded to the nearest multiple of 2^-F under ``mode`` (no range check)."""
        return np.ldexp(_round_int(np.ldexp(np.asarray(x, dtype=np.float64), self.frac_bits), mode, rng),
                        -self.frac_bits)


Format = FloatFormat | FixedFormat


def _round_int(q: np.ndarray, mode: str, rng: np.random.Generator | None) -> np.ndarray:
    if mode == "rne":
        return np.rint(q)
    if mode == "rz":
        return np.trunc(q)
    return np.floor(q + rng.random(q.shape))


def lowest(fmt: Format) -> float:
    """The most negative finite value of a format."""
    return fmt.min_value if isinstance(fmt, FixedFormat) else -fmt.max_value


def overflows(fmt: Format, r: np.ndarray) -> np.ndarray:
    """Which entries of ``r`` lie outside the format's finite range."""
    return (r > fmt.max_value) | (r < lowest(fmt))


def saturate(fmt: Format, r: np.ndarray) -> np.ndarray:
    """Clip ``r`` to the format's finite range."""
    return np.clip(r, lowest(fmt), fmt.max_value)


_FLOAT_RE = re.compile(r"^(\d+)\.(\d+)(fn)?$")
_FIXED_RE = re.compile(r"^q(\d+)\.(\d+)$")


def parse_format(family: str, text: str) -> Format:
    """``float`` + ``bf16`` / ``8.7`` / ``4.3fn``, or ``fixed`` + ``q16.16``."""
    if family == "float":
        m = _FLOAT_RE.match(FLOAT_NAMES.get(text, text))
        if not m:
            raise NumericsError(f"float:{text}: expected one of {', '.join(FLOAT_NAMES)} or E.M "
                                "(exponent.mantissa bits, e.g. float:8.7; suffix fn for the e4m3fn convention)",
                                param="numerics")
        return FloatFormat(int(m.group(1)), int(m.group(2)), bool(m.group(3)))
    m = _FIXED_RE.match(text)
    if not m:
        raise NumericsError(f"fixed:{text}: expected qI.F (I integer bits including the sign, "
                            "F fraction bits), e.g. fixed:q16.16", param="numerics")
    return FixedFormat(int(m.group(1)), int(m.group(2)))
