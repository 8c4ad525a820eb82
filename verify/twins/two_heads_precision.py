"""Broken twins of the certified-precision rows (``two_heads.rebuttal_log_bits`` and its fixed-tolerance variant)."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.sim.two_heads import blocks
from attnsim.verify.precision import certify, study
from attnsim.verify.twins import twin
from attnsim.verify.twins.breaks import wrapped


def radius_ignored() -> Any:
    """The certificate reads only the midpoints (every radius taken as 0): every precision "certifies"."""

    def exact_balls(f: Any, Y: Any) -> Any:
        return f(np.vectorize(lambda x: x.mid(), otypes=[object])(Y))

    return wrapped(certify.certified_bits, exact_balls)


def balls_without_radius() -> Any:
    """Ball arithmetic hands back its midpoints as exact balls (the radius dropped after each division, the
    output's last step)."""
    from unittest import mock

    from attnsim.sim.numerics.arb import Arb

    original = Arb.div

    def exact_mids(self: Any, a: Any, b: Any) -> Any:
        return np.vectorize(lambda x: x.mid(), otypes=[object])(original(self, a, b))

    return mock.patch.object(Arb, "div", exact_mids)


def decode_pad_off() -> Any:
    """Step 1's decode counts one padding row too many: the balls hold a wrong value, tightly."""
    return wrapped(blocks.decode_A, lambda f, pad: f(pad + 1))


def study_error_ignored() -> Any:
    """The precision study's error measure reads every run as exact (inf bits): the narrowest format "passes"."""
    return wrapped(study.error_bits, lambda f, Y, T: float("inf"))


twin("two_heads.rebuttal_log_bits_float", "decode_pad_off", "Step 1's decode counts one padding row too many "
     "(N = 36: the last key block is padded)", kind="construction", params={"N": 36})(decode_pad_off)
twin("two_heads.rebuttal_log_bits_float", "error_ignored", "the error measure reads every run as exact",
     kind="agreement", params={"N": 32})(study_error_ignored)

for _claim in ("two_heads.rebuttal_log_bits", "two_heads.rebuttal_log_bits_tolerance"):
    twin(_claim, "radius_ignored", "the certificate ignores the balls' radii (midpoints taken as exact)",
         kind="agreement", params={"N": 32})(radius_ignored)
    twin(_claim, "decode_pad_off", "Step 1's decode counts one padding row too many (N = 36: the last key block "
         "is padded)", kind="construction", params={"N": 36})(decode_pad_off)

twin("two_heads.lemma_3_1", "arb_radius_dropped", "in arb numerics each division's radius is dropped (midpoints "
     "passed off as exact)", kind="agreement", params={"N": 16, "M": 4, "d": 2},
     numerics="arb:64")(balls_without_radius)
