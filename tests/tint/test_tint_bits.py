"""What a TinT check asks for in mp below float64's precision: its float64 default less the bits the format lacks
(fuzzing found tint.attn_backward at mp:30 failed against the fixed 30 bits with 15.0 kept); and, for finite
differences at step 1/N, less the log2 N bits their rounding costs once N is large."""

from __future__ import annotations

import math
import re

import pytest
from cli_run import invoke

from attnsim.verify import tint_torch
from attnsim.verify.registry import CheckContext, UsageError
from attnsim.verify.tint_bits import REFERENCE_BITS, asked_bits, finite_difference_bits


def _ctx(numerics: str, min_bits: float | None = None) -> CheckContext:
    return CheckContext("tint.attn_backward", {}, numerics, 0, min_bits)


@pytest.mark.parametrize("numerics, asked", [("float64", 30.0), ("mp:200", 30.0), ("mp", 30.0), ("exact", 30.0),
                                             ("mp:53", 30.0), ("mp:52", 29.0), ("mp:30", 7.0), ("mp:24", 1.0)])
def test_the_default_loses_what_the_precision_lacks(numerics, asked):
    assert REFERENCE_BITS == 53 and asked_bits(_ctx(numerics), 30.0) == asked


def test_a_precision_that_leaves_under_a_bit_is_refused_naming_numerics():
    with pytest.raises(UsageError) as e:
        asked_bits(_ctx("mp:23"), 30.0)
    assert e.value.param == "numerics" and "lack 30" in str(e.value)
    assert asked_bits(_ctx("mp:23", min_bits=3.0), 30.0) == 3.0  # --min-bits replaces the rule


def test_attention_backward_at_mp_30_passes_and_mp_20_is_refused_in_one_line(capfd):
    if not tint_torch.available():
        pytest.skip(tint_torch.MISSING)
    args = ["check", "tint.attn_backward", "--case", "tiny-relu", "--seed", "0", "--numerics"]
    rc, out, _ = invoke([*args, "mp:30"], capfd)
    assert rc == 0 and "agreement: yes (15.0 bits)" in out, out
    rc, _, err = invoke([*args, "mp:30", "--min-bits", "16"], capfd)  # the same run held to more fails
    assert rc == 1
    rc, out, err = invoke([*args, "mp:20"], capfd)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--numerics" in err, err


@pytest.mark.parametrize("claim", ["tint.attn_backward", "tint.sgd_step", "tint.ln_backward", "tint.act_backward",
                                   "tint.dynamic_eval"])
def test_a_precision_too_narrow_is_refused_before_any_work(claim, capfd, monkeypatch):
    """The checks that ask 30 bits at float64 refuse mp:20 before they build anything: a slow check's progress
    line never comes before the one-line error (it did, on a loaded machine, when the refusal came last)."""
    import attnsim.verify.claims.tint as tint_claims
    import attnsim.verify.claims.tint_rows as tint_rows

    def work_began(name: str):
        raise AssertionError(f"{claim} began its work ({name}) before refusing the precision")

    for module in (tint_claims, tint_rows):
        monkeypatch.setattr(module, "get_arith", work_began)
    rc, _, err = invoke(["check", claim, "--numerics", "mp:20"], capfd)
    assert rc == 2 and err.strip().startswith("error: --numerics: mp:20") and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("numerics, largest_n, asked", [("float64", 800, 30.0), ("float64", 2 ** 13, 30.0),
                                                        ("float64", 2 ** 23, 20.0), ("mp:43", 2 ** 23, 10.0),
                                                        ("float64", 2 ** 42, 1.0)])
def test_a_finite_difference_asks_less_as_its_step_shrinks(numerics, largest_n, asked):
    assert finite_difference_bits(_ctx(numerics), 30.0, largest_n) == asked


def test_a_step_that_leaves_under_a_bit_is_refused_naming_fd_scale():
    with pytest.raises(UsageError) as e:
        finite_difference_bits(_ctx("float64"), 30.0, 2 ** 43)
    assert e.value.param == "fd_scale" and "log2 N = 43.0" in str(e.value)
    assert finite_difference_bits(_ctx("float64", min_bits=25.0), 30.0, 2 ** 43) == 25.0


def test_layer_norm_backward_at_sixteen_halvings_passes_where_it_failed(capfd):
    """N up to 3,276,800: 28.3 bits agree on an AMD EPYC and 28.8 on an Intel Xeon (the same packages: float64
    kernels round differently across CPUs), which the fixed 30 failed; the ask there is 43 - log2 N = 21.4."""
    if not tint_torch.available():
        pytest.skip(tint_torch.MISSING)
    rc, out, _ = invoke(["check", "tint.ln_backward", "--halvings", "16", "--seed", "0"], capfd)
    agreed = re.search(r"agreement: yes \(([0-9.]+) bits\)", out)
    assert rc == 0 and agreed is not None, out
    assert 43 - math.log2(3_276_800) <= float(agreed.group(1)) < 30.0, out
