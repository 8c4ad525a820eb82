"""The wall-clock cost model: its fits recover known coefficients; a tiny real run is complete."""

from __future__ import annotations

import math

import pytest

from attnsim.verify.bench.cost_model import CallFit, cost_model, fit_call_time, fit_overheads


def test_call_fit_recovers_a_quadratic() -> None:
    truth = CallFit(3e-8, 2e-6, 5e-5)
    Ms = [16, 32, 64, 128, 256]
    fit = fit_call_time(Ms, [truth(M) for M in Ms])
    assert fit.a == pytest.approx(truth.a, rel=1e-6) and fit.b == pytest.approx(truth.b, rel=1e-4)
    assert fit(512) == pytest.approx(truth(512), rel=1e-6)


def test_call_fit_never_goes_negative() -> None:
    fit = fit_call_time([16, 32, 64], [1.0, 1.0, 1.0])  # flat: only c explains it
    assert min(fit.a, fit.b, fit.c) >= 0 and fit(1000) == pytest.approx(1.0, rel=1e-6)


def test_overheads_recover_per_call_and_per_flop_costs() -> None:
    t_call, o, p = 1e-3, 2e-4, 1e-8
    runs = [{"calls": c, "processing_flops": f, "seconds": c * (t_call + o) + p * f}
            for c, f in ((16, 1e5), (64, 5e5), (256, 3e6))]
    got_o, got_p = fit_overheads(runs, t_call)
    assert got_o == pytest.approx(o, rel=1e-6) and got_p == pytest.approx(p, rel=1e-6)


def test_a_tiny_run_predicts_its_held_out_size() -> None:
    c = cost_model(d=8, M=8, Ms=(4, 8, 16), calibrate=(32, 64), held_out=128, repeats=5, table_N=256,
                   table_Ms=(8, 16, 32))
    assert c["held_out"]["calls"] == (128 // 8) ** 2
    assert math.isfinite(c["prediction_error"]) and c["predicted_seconds"] > 0
    assert [r["calls"] for r in c["table"]] == [1024, 256, 64]
