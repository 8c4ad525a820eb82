"""Exact weights whose size the inputs decide: built without a table the square of the largest exponent, and
refused by one error naming the numerics when they would not fit (GMP would end the process, not raise)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from attnsim.sim.numerics import exact as exact_mod
from attnsim.sim.numerics import flint_kernels, get_numerics, memory_room
from attnsim.sim.numerics.base import Numerics, NumericsError
from tests.cli_run import invoke

flint = pytest.importorskip("flint")


def _qkv(nm: Numerics, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores q·k = i·j·span over a 4 × 4 grid: exponents D·s up to 9 · 64 · span (past the table at span 100)."""
    q = nm.array(np.array([[i * span] for i in range(4)], dtype=object), "q")
    k = nm.array(np.array([[j] for j in range(4)], dtype=object), "k")
    v = nm.array(np.array([[Fraction(j + 1, 7), Fraction(-j, 5)] for j in range(4)], dtype=object), "v")
    return q, k, v


@pytest.mark.parametrize("numerics", ["exact", "exact:64:3/2"])
def test_exponents_past_the_table_give_the_generic_paths_weights(numerics: str) -> None:
    nm = get_numerics(numerics, 0)
    q, k, v = _qkv(nm, 100)
    assert 64 * 100 > flint_kernels.TABLE_TOP
    fast = nm.attention(q, k, v)
    generic = Numerics.attention(nm, q, k, v)  # one z**k at a time, no flint kernel
    assert (fast == generic).all()


def test_weights_past_the_room_are_refused_naming_numerics(monkeypatch: pytest.MonkeyPatch) -> None:
    nm = get_numerics("exact", 0)
    q, k, v = _qkv(nm, 100)
    monkeypatch.setattr(memory_room, "memory_room", lambda: 1000)
    monkeypatch.setattr(flint_kernels, "ALWAYS_FITS", 0)  # these weights take kilobytes: ask anyway
    with pytest.raises(NumericsError, match="would take about") as err:
        nm.attention(q, k, v)
    assert err.value.param == "numerics"
    with pytest.raises(NumericsError, match="needs the weight") as err:
        nm._power(exact_mod.LARGE_EXPONENT + 1)
    assert err.value.param == "numerics"


def test_a_model_whose_scores_explode_is_one_line_not_an_abort(capfd: pytest.CaptureFixture[str]) -> None:
    """Five layers of a quadratic MLP on large inputs: scores reach 3·10^9, whose weights z**(D·s) take
    terabytes. Before, a power table of every exponent made GMP abort the process at 12 GB."""
    code, out, err = invoke(["check", "two_heads.thm_1_4", "--N", "20", "--M", "8", "--d", "7", "--H", "1",
                             "--L", "5", "--Hp", "3", "--Lp", "2", "--window", "4", "--sinks", "1", "--scheme",
                             "fused", "--psi", "quadratic", "--input", "large"], capfd)
    assert code == 2
    errors = [line for line in err.splitlines() if not line.startswith("check two_heads.thm_1_4: ")]  # progress
    assert len(errors) == 1 and errors[0].startswith("error: --numerics:") and "MiB" in errors[0], err
    assert "Traceback" not in err and not out
