"""The pytest plugin, as a user meets it: a test file outside the repository, the ``attnsim-ci`` profile and the
``attnsim_check`` fixture; the correct construction passes, a block-local one fails."""

from __future__ import annotations

import subprocess
import sys
import textwrap

USER_TESTS = '''
from hypothesis import given, settings, strategies as st
import numpy as np

from attnsim.sim.masks import Full
from attnsim.sim.two_heads.worst_case import simulate
from attnsim.verify.strategies import cases, model_specs

ONE_HEAD = model_specs(max_N=8, max_d=2, max_H=1, max_L=1, mask=st.just(Full()))


def lemma_3_1(spec, weights, X, oracle):
    return simulate(spec, weights, X, oracle, b=oracle.spec.max_len - 1)


def block_local(spec, weights, X, oracle):
    """Broken: attention only inside each block of M tokens."""
    nm, M, hw = oracle.nm, oracle.spec.max_len - 1, weights.layers[0].heads[0]
    blocks = [X[s:s + M] for s in range(0, spec.N, M)]
    return np.concatenate([nm.attention(nm.matmul(B, nm.array(hw.WQ)), nm.matmul(B, nm.array(hw.WK)),
                                        nm.matmul(B, nm.array(hw.WV))) for B in blocks], axis=0)


@given(cases(ONE_HEAD), st.integers(2, 4))
def test_correct(attnsim_check, case, M):
    attnsim_check(lemma_3_1, case, M, calls=lambda n: 2 * n * n)


@given(cases(ONE_HEAD), st.integers(2, 4))
def test_broken(attnsim_check, case, M):
    attnsim_check(block_local, case, M)
'''


def test_a_user_test_file_passes_with_a_correct_construction_and_fails_with_a_broken_one(tmp_path) -> None:
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(USER_TESTS))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          "--hypothesis-profile=attnsim-ci", "-rA", "test_mine.py"],
                         cwd=tmp_path, capture_output=True, text=True)
    out = run.stdout + run.stderr
    assert "PASSED test_mine.py::test_correct" in out, out
    assert "FAILED test_mine.py::test_broken" in out and "output differs from the reference" in out, out
    assert "1 failed, 1 passed" in out and run.returncode == 1, out
