"""Fixed-width formats: bit-exact against ml_dtypes and apytypes, rounding properties, guard rails."""

from __future__ import annotations

import apytypes as apy
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim.sim.numerics import NumericsError, get_numerics
from attnsim.sim.numerics.fixed_formats import FixedFormat, FloatFormat, parse_format

ML_DTYPES = {"fp32": np.float32, "bf16": ml_dtypes.bfloat16, "fp16": np.float16,
             "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def _spread(rng: np.random.Generator, n: int, fmt: FloatFormat) -> np.ndarray:
    """float32 values over every binade of the format, its subnormals and just past its largest value."""
    lo = fmt.emin - fmt.man_bits - 2
    hi = int(np.floor(np.log2(min(fmt.max_value, 3e38)))) + 1
    e = rng.integers(lo, hi + 1, size=n)
    x = rng.uniform(1, 2, size=n) * np.ldexp(1.0, e) * rng.choice([-1, 1], size=n)
    ties = np.ldexp(rng.integers(1, 2 ** (fmt.man_bits + 2), size=n // 4) * 2 + 1, -fmt.man_bits - 2)
    with np.errstate(over="ignore"):
        out = np.concatenate([x, ties, -ties, [0.0, fmt.max_value]]).astype(np.float32).astype(np.float64)
    return out[np.isfinite(out)]


@pytest.mark.parametrize("name", sorted(ML_DTYPES))
def test_float_formats_match_ml_dtypes_bit_for_bit(name: str) -> None:
    # ml_dtypes converts float64 through float32 (double rounding), so the inputs are float32 values;
    # on them both sides round once.
    nm = get_numerics(f"float:{name}:sat")
    fmt = nm.fmt
    x = _spread(np.random.default_rng(1), 20000, fmt)
    ours = fmt.round(x, "rne", None)
    with np.errstate(over="ignore"):
        theirs = x.astype(ML_DTYPES[name]).astype(np.float64)
    inside = np.abs(ours) <= fmt.max_value
    assert inside.sum() > 15000
    assert np.array_equal(ours[inside].view(np.int64), theirs[inside].view(np.int64))
    # where attnsim reports overflow, ml_dtypes gives inf (IEEE formats) or NaN (e4m3fn: no inf)
    out = theirs[~inside]
    assert (np.isnan(out).all() if fmt.finite_top else np.isinf(out).all())
    assert np.array_equal(nm.round(x[~inside]), np.sign(x[~inside]) * fmt.max_value)


def test_float16_from_float64_matches_numpy() -> None:
    x = np.random.default_rng(2).normal(size=5000) * 2.0 ** np.random.default_rng(3).integers(-20, 15, 5000)
    assert np.array_equal(parse_format("float", "fp16").round(x, "rne", None), x.astype(np.float16).astype(float))


@pytest.mark.parametrize("rounding,mode", [("rne", apy.QuantizationMode.RND_CONV),
                                           ("rz", apy.QuantizationMode.TRN_ZERO)])
def test_fixed_matmul_matches_apytypes(rounding: str, mode) -> None:
    rng = np.random.default_rng(4)
    nm = get_numerics(f"fixed:q6.5:{rounding}:acc=q12.3")
    for _ in range(8):
        n, k, m = (int(v) for v in rng.integers(1, 7, size=3))
        A = rng.integers(-2 ** 6, 2 ** 6, size=(n, k)) / 2 ** 5   # |sums| <= 6 * 4 < 32: no overflow
        B = rng.integers(-2 ** 6, 2 ** 6, size=(k, m)) / 2 ** 5
        a = apy.APyFixedArray.from_float(A, int_bits=6, frac_bits=5)
        b = apy.APyFixedArray.from_float(B, int_bits=6, frac_bits=5)
        with apy.APyFixedAccumulatorContext(int_bits=12, frac_bits=3, quantization=mode):
            c = a @ b
        ref = c.cast(int_bits=6, frac_bits=5, quantization=mode).to_numpy()
        ours = nm.matmul(nm.array(A), nm.array(B))
        assert np.array_equal(ours, ref)
        assert not np.array_equal(ours, A @ B) or k == 1  # the accumulator really rounds


def test_fixed_rounding_matches_apytypes_casts() -> None:
    x = np.random.default_rng(5).uniform(-7.9, 7.9, size=4000)
    src = apy.APyFixedArray.from_float(x, int_bits=4, frac_bits=30)
    exact = src.to_numpy()
    for rounding, mode in (("rne", apy.QuantizationMode.RND_CONV), ("rz", apy.QuantizationMode.TRN_ZERO)):
        ref = src.cast(int_bits=4, frac_bits=6, quantization=mode).to_numpy()
        assert np.array_equal(FixedFormat(4, 6).round(exact, rounding, None), ref)


# -- properties of rounding ------------------------------------------------------------------
FORMATS = [FloatFormat(8, 7), FloatFormat(5, 10), FloatFormat(4, 3, True), FloatFormat(5, 2), FloatFormat(8, 23),
           FixedFormat(8, 8), FixedFormat(12, 20)]
finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)
fmt_st = st.sampled_from(FORMATS)
mode_st = st.sampled_from(["rne", "rz"])


@given(fmt_st, mode_st, finite, finite)
def test_rounding_is_monotone(fmt, mode, x, y) -> None:
    lo, hi = min(x, y), max(x, y)
    r = fmt.round(np.array([lo, hi]), mode, None)
    assert r[0] <= r[1]


@given(fmt_st, st.sampled_from(["rne", "rz", "sr"]), finite)
def test_rounding_is_idempotent(fmt, mode, x) -> None:
    rng = np.random.default_rng(0)
    r = fmt.round(np.array([x]), mode, rng)
    assert np.array_equal(fmt.round(r, mode, rng), r)


@given(fmt_st, st.sampled_from(["rne", "rz", "sr"]), st.integers(-2 ** 10, 2 ** 10), st.integers(-12, 6))
def test_rounding_is_exact_on_representable_values(fmt, mode, k, e) -> None:
    if isinstance(fmt, FloatFormat):
        k = k % (2 ** min(fmt.bits, 10))
        e = max(e, fmt.emin - fmt.man_bits)
    else:
        e = max(e, -fmt.frac_bits)
    x = np.ldexp(float(k), e)
    if (abs(x) > fmt.max_value) or (isinstance(fmt, FixedFormat) and x < fmt.min_value):
        return
    assert fmt.round(np.array([x]), mode, np.random.default_rng(0))[0] == x


@given(st.integers(2, 20), st.integers(1, 12), mode_st, finite)
def test_wider_float_never_rounds_worse(man, extra, mode, x) -> None:
    # a finer grid contains the coarser one, so a single rounding is never further away (tolerance 0)
    narrow, wide = FloatFormat(8, man), FloatFormat(8, man + extra)
    err_n = abs(narrow.round(np.array([x]), mode, None)[0] - x)
    err_w = abs(wide.round(np.array([x]), mode, None)[0] - x)
    assert err_w <= err_n


@given(st.integers(0, 20), st.integers(1, 12), mode_st, finite)
def test_wider_fixed_never_rounds_worse(frac, extra, mode, x) -> None:
    narrow, wide = FixedFormat(16, frac), FixedFormat(16, frac + extra)
    assert abs(wide.round(np.array([x]), mode, None)[0] - x) <= abs(narrow.round(np.array([x]), mode, None)[0] - x)


@given(st.integers(0, 2 ** 16), st.integers(6, 14))
def test_wider_format_attention_error_within_tolerance(seed, man) -> None:
    """Whole attention (many roundings): 4 more mantissa bits never lose more than 1 bit of accuracy."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.uniform(-1, 1, size=(8, 3)) for _ in range(3))
    s = q @ k.T
    truth = (np.exp(s - s.max(1, keepdims=True)) @ v) / np.exp(s - s.max(1, keepdims=True)).sum(1, keepdims=True)
    errs = []
    for m in (man, man + 4):
        nm = get_numerics(f"float:8.{m}")
        y = nm.attention(nm.array(q), nm.array(k), nm.array(v))
        errs.append(np.max(np.linalg.norm(y - truth, axis=1) / np.linalg.norm(truth, axis=1)))
    assert errs[1] <= 2 * errs[0] + 2.0 ** -40


# -- backend behaviour and guard rails --------------------------------------------------------
def test_every_primitive_rounds() -> None:
    nm = get_numerics("float:8.3")
    a, b = nm.array([1.0, 3.0]), nm.array([3.0, 7.0])
    assert nm.div(a, b).tolist() == [0.34375, 0.4375]        # 1/3, 3/7 to 4 significant bits
    assert nm.add(nm.array([8.0]), nm.array([0.5])).tolist() == [8.0]  # 8.5 is a tie: even 8
    assert nm.rowsum(nm.array([[8.0, 0.5, 0.5]])).tolist() == [[8.0]]   # sequential: (8+.5)+.5
    assert nm.rowsum(nm.array([[0.5, 0.5, 8.0]])).tolist() == [[9.0]]
    wide = get_numerics("float:8.3:acc=fp32")
    assert wide.rowsum(wide.array([[8.0, 0.5, 0.5]])).tolist() == [[9.0]]
    w = nm.weights(nm.array([[0.0, -1.0]]), None)
    assert w.tolist() == [[1.0, 0.375]]                         # exp(-1) = 0.3679 -> 0.375


def test_matmul_batches_over_leading_axes() -> None:
    nm = get_numerics("float:bf16")
    rng = np.random.default_rng(6)
    a, b = nm.array(rng.normal(size=(3, 4, 5))), nm.array(rng.normal(size=(3, 5, 2)))
    batched = nm.matmul(a, b)
    assert all(np.array_equal(batched[i], nm.matmul(a[i], b[i])) for i in range(3))


def test_stochastic_rounding_is_seeded_and_unbiased() -> None:
    x = np.full(20000, 1 + 2.0 ** -10)
    r1 = get_numerics("float:bf16:sr", seed=3).round(x)
    r2 = get_numerics("float:bf16:sr", seed=3).round(x)
    assert np.array_equal(r1, r2)
    assert set(np.unique(r1)) == {1.0, 1 + 2.0 ** -7}
    assert abs(r1.mean() - x[0]) < 2.0 ** -13


def test_overflow_raises_or_saturates() -> None:
    with pytest.raises(NumericsError, match="float:e5m2: overflow"):
        get_numerics("float:e5m2").array([1e6])
    assert get_numerics("float:e5m2:sat").array([1e6, -1e6]).tolist() == [57344.0, -57344.0]
    assert get_numerics("fixed:q4.2:sat").array([100.0, -100.0]).tolist() == [7.75, -8.0]


def test_format_too_narrow_for_the_synthetic_constant() -> None:
    with pytest.raises(NumericsError, match=r"fixed:q1.8: the format cannot represent the constant 1"):
        get_numerics("fixed:q1.8").ones((2, 1))


def test_division_by_rounded_zero_names_the_format() -> None:
    nm = get_numerics("float:bf16")
    p = nm.div(nm.array([1000.0]), nm.add(nm.array([1000.0]), nm.array([1.0])))  # A/(A+1) -> 1 in bf16
    with pytest.raises(NumericsError, match=r"float:bf16: division .* p rounded to 1"):
        nm.div(p, nm.sub(nm.ones(p.shape), p))


@pytest.mark.parametrize("bad", ["float", "float:9.9.9", "float:bf17", "float:12.3", "fixed:16.16",
                                 "fixed:q30.30", "float:bf16:xx", "float:bf16:rn"])
def test_bad_names_are_clear_errors(bad: str) -> None:
    with pytest.raises(NumericsError) as err:
        get_numerics(bad)
    assert err.value.param == "numerics" and bad.split(":")[0] in str(err.value)


def test_nonfinite_input_is_refused() -> None:
    with pytest.raises(NumericsError, match="X: non-finite"):
        get_numerics("float:fp16").array(np.array([1.0, np.nan]), "X")


@pytest.mark.parametrize("name", ["float:fp32", "float:bf16", "fixed:q16.16"])
def test_a_scalar_is_the_value_rounded_into_the_format(name: str) -> None:
    nm = get_numerics(name)
    assert nm.scalar(1) == 1.0 and nm.scalar(0.1) == float(nm.array(np.array([0.1]))[0]) != 0.1
