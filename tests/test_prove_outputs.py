"""The output identities catch what the call plan cannot: six bugs outside ``plan.py``, each planted
alone, make the claim's output identity fail, and the replay of that failure as an ordinary exact
check fails too (prover twins, at the identity's small sizes)."""

from __future__ import annotations

import json
import types
from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

import numpy as np
import pytest

from attnsim.sim.two_heads import blocks, multi_layer, packing, worst_case
from attnsim.sim.two_heads import plan as P
from attnsim.verify.cli.app import main
from attnsim.verify.prove.atoms import AtomNumerics, Field
from attnsim.verify.prove.outputs import LAYERS
from attnsim.verify.prove.run import OUTPUT, all_proved, output_rows, quick_obligation, run
from attnsim.verify.prove.status import OUTPUT_PROVED, PLAN_PROVED, proof_status

PAPER = "scheme=paper length=paper"
DECODE_A, SORT_PARTS, LAYOUT_INPUT, APPLY = blocks.decode_A, blocks.sort_parts, blocks.layout_input, \
    worst_case.apply_token_map


@contextmanager
def decode_ignores_padding() -> Iterator[None]:
    """Step 1's decode p/(1 − p) as if no padding row were ever present."""
    with mock.patch.object(blocks, "decode_A", lambda pad: DECODE_A(0)):
        yield


@contextmanager
def combination_skips_a_key_block() -> Iterator[None]:
    """Eq. (1) leaves the last key block out of the first query block's sums."""
    def skip(nm: Any, parts: Any) -> Any:
        A, B = SORT_PARTS(nm, parts)
        last = max((k for k in A if k[0] == 0), key=lambda k: k[1])
        del A[last], B[last]
        return A, B

    with mock.patch.object(blocks, "sort_parts", skip):
        yield


@contextmanager
def synthetic_row_valued() -> Iterator[None]:
    """The synthetic row of a normaliser call is not zero: it holds a copy of the call's first key."""
    def valued(nm: Any, Xk: Any, Xq: Any, lay: P.Layout) -> Any:
        Z = LAYOUT_INPUT(nm, Xk, Xq, lay)
        key = next(s for s in lay.segs if s.what == "key")
        for seg in lay.segs:
            if seg.what == "synth" and seg.hi > seg.lo and key.hi > key.lo:
                Z[seg.lo:seg.hi, :Xk.shape[1]] = Z[key.lo:key.lo + 1, :Xk.shape[1]]
        return Z

    with mock.patch.object(blocks, "layout_input", valued):
        yield


@contextmanager
def psi_skipped_on_the_last_layer() -> Iterator[None]:
    """The layer MLP of the last layer is not applied: a run's second ψ (the identity and its replay run
    L = 2 layers; one oracle per run)."""
    assert LAYERS == 2
    seen: dict[int, tuple[Any, int]] = {}

    def skip(nm: Any, oracle: Any, fmap: Any, X: Any, b: int, tag: str) -> Any:
        if tag == "layer_mlp":
            count = seen.get(id(oracle), (oracle, 0))[1] + 1
            seen[id(oracle)] = (oracle, count)
            if count == LAYERS:
                return X
        return APPLY(nm, oracle, fmap, X, b, tag)

    with mock.patch.object(worst_case, "apply_token_map", skip), \
            mock.patch.object(multi_layer, "apply_token_map", skip):
        yield


@contextmanager
def heads_read_each_others_columns() -> Iterator[None]:
    """The packed model's driver hands head h the columns of head h + 1 (its own copy of the split)."""
    proxy = types.SimpleNamespace(**{k: getattr(P, k) for k in dir(P) if not k.startswith("__")})
    proxy.model_head_columns = lambda h, m: P.model_head_columns((h + 1) % 2, m)
    with mock.patch.object(multi_layer, "P", proxy):
        yield


@contextmanager
def packed_slot_stride() -> Iterator[None]:
    """The read-back of a packed call strides the heads by L'·w columns instead of L'·(w + o)."""
    def read(out: Any, job: Any, k: int, heads: int, layers: int, w: int, o: int) -> Any:
        h, layer = divmod(k, layers)
        start = h * layers * w + layers * w + layer * o
        return out[:job.Z.shape[0], start:start + job.out_width]

    with mock.patch.object(packing, "_read_slot", read):
        yield


BUGS = [(decode_ignores_padding, "two_heads.lemma_3_1"), (combination_skips_a_key_block, "two_heads.lemma_3_1"),
        (synthetic_row_valued, "two_heads.lemma_3_1"), (psi_skipped_on_the_last_layer, "two_heads.cor_3_2"),
        (heads_read_each_others_columns, "two_heads.thm_3_4"), (packed_slot_stride, "two_heads.thm_3_4")]


@pytest.mark.parametrize("bug, claim", BUGS, ids=[b.__name__ for b, _ in BUGS])
def test_a_bug_outside_the_plan_fails_the_prover_and_every_replay(bug, claim):
    """The prover's run (the paper variant's plan rows, the per-call and output identities) is not all
    proved, and every row that is not proved is a failed identity or counterexample whose replay fails."""
    with bug():
        rows = run([claim], keep=quick_obligation, second=False)
    bad = [r for r in rows if r.status != "proved"]
    assert not all_proved(rows) and any(r.obligation == OUTPUT for r in bad), rows
    assert all(r.replay is not None and r.replay["verdict"] == "fail" for r in bad), [r.replay for r in bad]


@pytest.mark.slow
def test_the_prover_exits_non_zero_on_a_bug_outside_the_plan(capsys):
    """``attnsim prove`` itself (every variant, both solvers) exits 1 with the decode bug planted (about 25 s
    of one loaded core)."""
    with decode_ignores_padding(), pytest.raises(SystemExit) as exit_:
        main(["prove", "two_heads.lemma_3_1", "--format", "json"])
    assert exit_.value.code == 1
    record = json.loads(capsys.readouterr().out)
    failed = [r for r in record["obligations"] if r["status"] != "proved"]
    assert failed and all(r["obligation"] == OUTPUT and r["replay"]["verdict"] == "fail" for r in failed), failed


def test_the_output_identities_hold_on_the_real_code():
    rows = output_rows("two_heads.thm_3_5", lambda v: v == PAPER) + output_rows("two_heads.lemma_3_3")
    assert [r.status for r in rows] == ["proved", "proved"], rows


def test_exp_is_split_at_its_integer_constant():
    F = Field(["x", "y"], atoms=4)
    nm = AtomNumerics(F)
    x, y = F.symbols["x"], F.symbols["y"]
    w = nm.weights(np.array([[x * y + 1, x * y, x * y - 2, nm.scalar(0)]], dtype=object), None)[0]
    E = type(x)(F, F.E)
    assert w[0] == w[1] * E and w[2] * E * E == w[1] and w[3] == 1 and not w[1] == 1


def test_status_reads_output_and_plan_rows():
    plan = {"obligation": "coverage[norm]", "status": "proved", "scope": "every size"}
    out = {"obligation": OUTPUT, "status": "proved", "scope": "symbolic entries"}
    both = {**plan, "cvc5": "unsat"}
    assert proof_status("two_heads.lemma_3_1", {"two_heads.lemma_3_1": [both, out]}) == f"{OUTPUT_PROVED} (z3 and cvc5)"
    assert proof_status("two_heads.lemma_3_1", {"two_heads.lemma_3_1": [plan]}) == f"{PLAN_PROVED} (z3; cvc5 not run)"
    one = {**plan, "cvc5": "unknown"}
    assert proof_status("two_heads.lemma_3_1", {"two_heads.lemma_3_1": [both, one, out]}).endswith(
        "(z3; cvc5 confirms 1 of 2)")
    bad = {**out, "status": "failed"}
    assert proof_status("two_heads.lemma_3_1", {"two_heads.lemma_3_1": [plan, bad]}).startswith("proof failed")
