"""Independent means independent: a record labelled ``independent`` names its reference, and the reference
shares no code with the construction beyond the numerics.

Each independent claim is run once, small (sizes at which the traced run calls the same attnsim functions on
each side as at larger ones: the relay claims at N = 128, Thm 4.1 at N = 1024), under a trace of every attnsim
function called. The functions called while one side's root is on the stack (the reference's, or the
construction's where the reference is a plain expression) form that side; every other attnsim function called
in the run forms the other.
The test fails on a function found on both sides, naming it, unless it is listed in :data:`SHARED` with
why it may be shared (the numerics, input validation, the ledger, the definition of the model being
simulated). A claim whose record says ``independent`` but that has no entry here fails too.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from shared_once import shared_record

import attnsim.sim as sim_pkg
import attnsim.verify as verify_pkg
from attnsim.verify.registry import CheckContext, Measurement, all_checkers, get_checker

CODE = tuple(str(Path(p.__file__).parent) for p in (sim_pkg, verify_pkg))
TWINS = str(Path(verify_pkg.__file__).parent / "twins")

_MODEL = "attnsim.sim.model:reference"
_MODEL_SIDE = (_MODEL, "attnsim.verify.decode_allowance:BlockDecode.loss_bits",
               "attnsim.verify.decode_allowance:BlockDecode.floor_bits")
"""The reference, and the allowances read off its own scores (the bits Lemma 3.1's decode and the format's floor
may lose)."""
_LSH = "attnsim.verify.lsh_reference:collision_counts"
_RELAY = ("attnsim.sim.anna.mpc_to_anna:MPCTransformer.__call__", "attnsim.sim.anna.mpc_to_anna:MPCTransformer.place",
          "attnsim.sim.anna.mpc_to_anna:MPCTransformer.readout")
_TORCH = ("attnsim.verify.tint_torch:sgd_steps", "attnsim.verify.tint_torch:forward_logits",
          "attnsim.verify.tint_torch:module")
_TINT = ("attnsim.sim.tint.pipeline:Runner.__call__", "attnsim.sim.tint.pipeline:run", "attnsim.sim.tint.builder:build",
         "attnsim.sim.tint.mlp_aux:build_mlp", "attnsim.sim.tint.mlp_aux:run_mlp")

SHARED = {
    "sim/numerics/": "the numerics both sides compute in (exact, mp, float backends)",
    "sim/tint/arith.py": "the numerics of the TinT wing",
    "sim/errors.py": "input validation",
    "sim/anna/errors.py": "input validation (require, as_matrix)",
    "sim/ledger.py": "the ledger: the construction writes it, the checker reads it",
    "sim/anna/mpc.py:": "the MPC machine: the referee both the input loading and the construction run on",
    "verify/layer_record.py:Recorded.__call__": "the checker's instrument recording each layer's output",
    # the model being simulated: its definition is an input to both sides, not a way of computing the answer
    "sim/model.py:TransformerSpec.": "the large model's shape",
    "sim/model.py:Weights.validate": "the large model's weights' shapes",
    "sim/model.py:head_columns": "Def 2.2's columns D_h of head h",
    "sim/masks.py:": "the mask of the large model",
    "sim/token_maps.py:": "the large model's token-wise maps (psi, layer norm, MLP)",
    "sim/rope.py:": "the large model's rotary embedding (the RoPE rebuttal's model)",
    "sim/anna/anna_stack.py:clustered_stack.": "the simulated ANNA layers' query, key and value maps",
    "sim/anna/anna_stack.py:exact_match_stack.": "the simulated EMA layers' query, key and value maps",
    "sim/anna/anna_stack.py:exact_row": "the simulated layers' state update",
    "sim/anna/anna_stack.py:_unit": "the simulated layers' state update",
    # the construction's own parameters, read by the checker to count its resources
    "sim/anna/message_code.py:MessageCode.block": "the code's block length (counted as the dimension)",
    "sim/anna/message_code.py:MessageCode.width": "the code's width (counted as the dimension)",
    "sim/anna/relay_routing.py:RelayPlan.tokens": "the relay's token count (counted)",
    "sim/anna/relay_routing.py:RelayPlan.capacity": "the relay's capacity per layer (counted)",
    "sim/anna/relay_plan.py:capacity": "the relay's capacity per layer (the formula RelayPlan.capacity reads)",
    "sim/anna/message_code.py:code_width": "the code's width (the formula MessageCode.width reads)",
    "sim/tint/modules.py:Geometry.": "TinT's geometry (its width and prefixes)",
    "sim/tint/configs.py:": "the auxiliary model's and TinT's configuration (widths, heads)",
    "sim/tint/cases.py:": "the named TinT case (its tokens and configuration)",
}
SHARED_BY_CLAIM = {
    "tint.def_2_7": {"sim/tint/aux_model.py:normalize": "the layer norm whose first-order gradient Def 2.7 takes: "
                     "the function differenced is the problem, not a way of computing the answer"},
    "anna.thm_4_2": {p: "the simulated layer's hash functions: Thm C.3 simulates Algorithm 1 with the drawn "
                     "hashes (Algorithm 1 itself is anna.alg_1's claim, held against an independent reference)"
                     for p in (f"sim/anna/lsh.py:{f}" for f in ("TableHash.", "table_codes", "_hashed", "_project"))},
}

# claim -> (small parameters, "reference" or "construction", root functions of that side as module:qualname)
SIDES: dict[str, tuple[dict[str, Any], str, tuple[str, ...]]] = {
    **{c: ({}, "reference", _MODEL_SIDE) for c in ("two_heads.lemma_3_1", "two_heads.rebuttal_rope")},
    "two_heads.cor_3_2": ({"N": 8, "M": 4, "d": 4, "H": 2, "L": 2}, "reference", _MODEL_SIDE),
    **{c: ({"L": 1}, "reference", _MODEL_SIDE)
       for c in ("two_heads.thm_3_4", "two_heads.thm_1_1", "two_heads.thm_3_5")},
    **{c: ({}, "reference", _MODEL_SIDE) for c in ("two_heads.thm_5_1", "two_heads.thm_1_4")},
    "two_heads.rebuttal_norm": ({"N": 13, "M": 4}, "reference", _MODEL_SIDE),
    "two_heads.lemma_3_3": ({}, "construction", ("attnsim.sim.two_heads.packing:run_packed",)),
    "two_heads.claim_b_6": ({}, "construction", ("attnsim.sim.two_heads.causal:block_denominators",)),
    "two_heads.thm_4_1": ({"N": 1024, "M": 128, "eps": 2.0, "seeds": 2, "input": "bounded"}, "reference",
                          ("attnsim.verify.reference_attention:softmax_attention",)),
    "two_heads.thm_4_2": ({}, "reference", ("attnsim.sim.two_heads.converse:reference",)),
    **{c: ({"N": 16, "M": 4}, "reference", ("attnsim.verify.precision.truth:attention_truth",))
       for c in ("two_heads.rebuttal_log_bits", "two_heads.rebuttal_log_bits_tolerance",
                 "two_heads.rebuttal_log_bits_float")},
    "two_heads.rebuttal_kv_memory": ({"N": 256, "M": 32, "d": 16, "points": 3, "engine_N": 0, "direct_N": 0},
                                     "reference", ("attnsim.verify.reference_attention:softmax_attention",)),
    "anna.alg_1": ({"N": 16, "seeds": 2}, "reference", (_LSH,)),
    "anna.alg_2": ({"N": 16, "seeds": 2}, "reference", (_LSH,)),
    "anna.thm_5_2": ({"examples": 5, "mechanism": "ema"}, "reference", ("attnsim.sim.anna.tasks:match2_labels",)),
    "anna.khop": ({"strings": 2}, "reference", ("attnsim.sim.anna.tasks:hop_labels",)),
    "anna.def_ema": ({"N": 64}, "construction", ("attnsim.sim.anna.attention:ema",)),
    "anna.lemma_d_2": ({"N": 100}, "construction", ("attnsim.sim.anna.mpc_lowrank:lowrank_mpc",)),
    "anna.prop_e_3": ({"L": 3}, "construction", ("attnsim.sim.anna.transformer:AnnaTransformer.__call__",)),
    "anna.thm_4_2": ({"N": 32, "layers": 1, "r": 0.1, "c": 14.0, "eps1": 0.75, "s_scale": 200.0}, "reference",
                     ("attnsim.sim.anna.anna_stack:run_stack",)),
    "anna.thm_c_1": ({"N": 64, "layers": 1, "eps1": 0.5, "s_scale": 200.0}, "reference",
                     ("attnsim.sim.anna.anna_stack:run_stack",)),
    "anna.lemma_c_2": ({"N": 256}, "construction", ("attnsim.sim.anna.mpc_splitter_sort:splitter_sort",)),
    **{c: ({"protocol": "sort", "N": 256, "P": 16}, "construction", _RELAY)
       for c in ("anna.thm_4_1", "anna.thm_b_10", "anna.cor_b_14")},
    **{c: ({"N": 256, "P": 16, "depth": 2}, "construction", _RELAY)
       for c in ("anna.thm_4_4", "anna.cor_d_3", "anna.thm_d_1")},
    "anna.lemma_b_4": ({"q": 500, "alpha": 3, "trials": 5}, "construction",
                       ("attnsim.sim.anna.message_code:MessageCode.decode",)),
    "anna.lemma_b_5": ({"N": 50, "block": 7}, "construction", ("attnsim.sim.anna.mpc_to_anna:MPCTransformer.place",)),
    "anna.lemma_b_6": ({"N": 50, "block": 7}, "construction",
                       ("attnsim.sim.anna.mpc_to_anna:MPCTransformer.readout",)),
    **{c: ({"N": 64}, "construction", ("attnsim.sim.anna.transformer:AnnaTransformer.__call__",))
       for c in ("anna.thm_5_4_direct", "anna.thm_5_6_direct")},
    **{c: ({"N": 128, "sort": "letter", "eps": 0.75}, "construction", _RELAY)
       for c in ("anna.thm_5_4", "anna.thm_5_6")},
    "anna.cor_b_9": ({"protocol": "khop", "N": 64, "P": 64}, "construction",
                     ("attnsim.sim.anna.mpc_direct:DirectTransformer.__call__", *_RELAY[1:])),
    "anna.lemma_b_12": ({"N": 256, "P": 16, "eps": 0.875, "k": 4}, "construction", _RELAY),
    "anna.lemma_b_13": ({"N": 64, "P": 16, "fan": 3}, "construction",
                        ("attnsim.sim.anna.mpc_direct:DirectTransformer.__call__", *_RELAY[1:])),
    **{c: ({}, "construction", _TINT) for c in ("tint.linear_forward", "tint.linear_backward", "tint.linear_descent",
                                                 "tint.act_forward")},
    "tint.thm_2_5": ({}, "construction", ("attnsim.sim.tint.linear_attention:softmax_simulation",)),
    "tint.def_2_1": ({}, "construction", ("attnsim.sim.tint.rows:prefix_layout",)),
    "tint.def_2_3": ({}, "construction", ("attnsim.sim.tint.rows:attention_layer",)),
    "tint.attn_descent": ({}, "construction", ("attnsim.sim.tint.rows:attention_descent",)),
    "tint.ln_descent": ({}, "construction", ("attnsim.sim.tint.rows:ln_descent",)),
    "tint.mlp_split": ({}, "construction", ("attnsim.sim.tint.rows:mlp_split",)),
    "tint.loss_gradient": ({}, "construction", ("attnsim.sim.tint.rows:loss_gradient",)),
    "tint.def_2_7": ({}, "construction", ("attnsim.sim.tint.rows:first_order_gradient",)),
    **{c: ({"approximations": False} if c == "tint.sgd_step" else {}, "reference", _TORCH)
       for c in ("tint.sgd_step", "tint.attn_backward", "tint.dynamic_eval")},
    "tint.thm_1_1": ({"case": "tiny-relu"}, "reference", _TORCH),
    "tint.rebuttal_mlp_aux": ({}, "reference",
                              ("attnsim.verify.tint_tape:mlp_sgd", "attnsim.verify.tint_torch:mlp_sgd")),
    **{c: ({"halvings": 2}, "reference", _TORCH) for c in ("tint.ln_backward", "tint.act_backward")},
    **{c: ({}, "reference", _TORCH) for c in ("tint.ln_forward", "tint.attn_forward", "tint.def_2_8")},
}
# the torch reference (their exact route, the tape, is traced below)
NUMERICS = {c: "float64" for c in ("tint.sgd_step", "tint.attn_backward", "tint.dynamic_eval", "tint.ln_forward",
                                   "tint.attn_forward", "tint.def_2_8")}
# The reference's own code, which may call nothing of attnsim but the numerics (no construction code at all)
REFERENCE_OWN = ("verify/tint_torch.py", "verify/tint_tape.py", "sim/tint/arith.py")
# Independent counts with no output: parameters counted from the built network's arrays, against the size
# formulas of paper_refs that theory evaluates after the checker (no code of the checker's run computes them).
FORMULA_REFERENCED = {"tint.size": {"aux": "tiny"}, "tint.under_2b": {}, "tint.rebuttal_size_growth": {}}
NOT_INDEPENDENT = {"two_heads.lower_bound", "anna.rebuttal_hash_tables", "anna.rebuttal_linear_memory",
                   "tint.stacking", "tint.param_sharing", "tint.rebuttal_fd_end_to_end", "tint.act_descent"}


def _code(path: str) -> Any:
    module, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return inspect.unwrap(obj).__code__


def _name(code: Any) -> str:
    path = Path(code.co_filename)
    for root in CODE:
        if code.co_filename.startswith(root):
            return f"{Path(root).name}/{path.relative_to(root).as_posix()}:{code.co_qualname}"
    return f"{path}:{code.co_qualname}"


class _Sides:
    """A trace function (``sys.settrace``) sorting attnsim functions into inside / outside the roots: a root's
    frame gets a local trace (line events off) that hears its return, so the depth is kept in O(1) a call."""

    def __init__(self, roots: set[Any]) -> None:
        self.roots, self.inside, self.outside, self.depth = roots, set(), set(), 0

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        root = code in self.roots
        self.depth += root
        if code.co_filename.startswith(CODE) and not code.co_filename.startswith(TWINS):
            (self.inside if self.depth else self.outside).add(code)
        if not root:
            return None
        frame.f_trace_lines = False
        return self._leave

    def _leave(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "return":
            self.depth -= 1
        return self._leave


def _run_traced(roots: tuple[str, ...], fn: Any) -> tuple[Any, _Sides]:
    sides = _Sides({_code(r) for r in roots})
    sys.settrace(sides)
    threading.settrace(sides)
    try:
        return fn(), sides
    finally:
        sys.settrace(None)
        threading.settrace(None)


def traced(claim: str, params: dict[str, Any], roots: tuple[str, ...]) -> tuple[Measurement, list[str], int]:
    """Run ``claim``'s checker under the trace (the theory that judges its counts after is not traced): its
    measurement, the functions found on both sides that are not shared by design, the count inside."""
    chk = get_checker(claim)
    if claim in NUMERICS:  # the torch reference: one thread (the suite shares the CPU)
        pytest.importorskip("torch", reason="the torch reference needs the torch extra").set_num_threads(1)
    ctx = CheckContext(claim, chk.resolve(params), NUMERICS.get(claim, chk.default_numerics), 0)
    measurement, sides = _run_traced(roots, lambda: chk.fn(ctx))
    both = sorted(_name(c) for c in sides.inside & sides.outside)
    allowed = (*SHARED, *SHARED_BY_CLAIM.get(claim, {}))
    return measurement, [n for n in both if not n.startswith(allowed)], len(sides.inside)


@pytest.mark.parametrize("route", ["torch", "tape"])
def test_tint_step_references_run_no_attnsim_model_code(route):
    """tint.sgd_step's references (torch autograd; the tape, here in float64: the same functions as in exact
    arithmetic) call nothing of attnsim but their own module and the numerics: no construction code, and none of
    the auxiliary model's hand-derived step."""
    from attnsim.sim.tint import aux_model as am
    from attnsim.sim.tint.arith import get_arith
    from attnsim.sim.tint.cases import CASES
    from attnsim.verify import tint_tape
    from attnsim.verify.tint_independent import step_against_reference

    ar, c = get_arith("float64"), CASES["tiny-relu"]
    w = am.init_weights(c.aux, ar, c.seed)  # outside the trace: the input weights
    pos = np.arange(len(c.ids)) < c.n_train - 1
    if route == "torch":
        pytest.importorskip("torch", reason="the torch reference needs the torch extra").set_num_threads(1)
        roots, run = _TORCH, lambda: step_against_reference(c, ar, w, w, ar.zeros((6, 16)), 1000, False)
    else:
        roots = ("attnsim.verify.tint_tape:sgd_steps", "attnsim.verify.tint_tape:forward_logits")
        run = lambda: tint_tape.sgd_steps(ar, w, c.tokens, pos, c.aux.heads, c.aux.activation, 0.25, 2, 1,  # noqa: E731
                                          1e-3)
    _, sides = _run_traced(roots, run)
    assert sides.inside
    foreign = sorted(n for n in map(_name, sides.inside) if not n.startswith(REFERENCE_OWN))
    assert not foreign, f"the {route} reference runs attnsim code: {foreign}"


@pytest.mark.parametrize("claim", sorted(SIDES))
def test_reference_and_construction_share_no_code(claim):
    params, side, roots = SIDES[claim]
    m, overlap, inside = traced(claim, params, roots)
    if m.extra.get("partial"):
        pytest.skip(f"the record is partial ({m.extra['partial']}): its reference did not run")
    assert m.evidence == "independent" and m.reference, m.evidence
    assert inside, f"{claim}: the {side} roots {roots} never ran"
    assert not overlap, f"{claim}: the {side} and the rest of the run share {overlap}"


def test_a_shared_path_is_found():
    """The tracer finds shared code: the auxiliary model's hand-derived step, kept beside tint.sgd_step's
    independent reference, shares its layer norm with TinT's modules (which is why it is not the verdict)."""
    _, overlap, _ = traced("tint.sgd_step", {"approximations": False}, ("attnsim.sim.tint.experiments:reference",))
    assert any("aux_model.py:normalize" in o for o in overlap), overlap


@pytest.mark.parametrize("claim", sorted(FORMULA_REFERENCED))
def test_a_count_held_against_paper_refs_names_its_formula(claim, tmp_path_factory):
    # the record of the point, shared with the other tests that read it (tint.under_2b's takes about 10 CPU s)
    record = shared_record(tmp_path_factory, claim, FORMULA_REFERENCED[claim], None)
    assert record["evidence"] == "independent" and record["agree"] is None and "paper_refs" in record["reference"]


def test_every_claim_is_traced_or_declared_not_independent():
    claims = set(all_checkers())
    declared = SIDES.keys() | FORMULA_REFERENCED.keys() | NOT_INDEPENDENT
    assert len(declared) == len(SIDES) + len(FORMULA_REFERENCED) + len(NOT_INDEPENDENT)
    assert claims == declared, sorted(claims ^ declared)


def test_a_truth_computed_by_the_estimator_is_found(monkeypatch):
    from attnsim.sim.two_heads import average
    from attnsim.verify import reference_attention
    from attnsim.verify.claims import two_heads_approx

    def by_estimator(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return average.estimate(q, k, v, np.arange(len(q)), len(q))

    monkeypatch.setattr(reference_attention, "softmax_attention", by_estimator)
    monkeypatch.setattr(two_heads_approx, "softmax_attention", by_estimator)
    params, _, roots = SIDES["two_heads.thm_4_1"]
    _, overlap, _ = traced("two_heads.thm_4_1", params, roots)
    assert "sim/two_heads/average.py:estimate" in overlap


def test_the_evidence_page_says_what_the_anna_and_tint_checkers_declare():
    """docs/evidence_anna_tint.md lists every ANNA and TinT checker once, and its label is the one the code declares: an
    ``independent`` row is a claim whose run is traced above (or is held against a paper_refs formula), any other
    label a claim declared not independent."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "evidence_anna_tint.md").read_text()
    labels: dict[str, str] = {}
    for cell, label in re.findall(r"^\| ([a-z0-9_., ]+) \| (independent|self-consistency|sanity) \|", page, re.M):
        for claim in cell.split(", "):
            assert claim not in labels, f"{claim} listed twice"
            labels[claim] = label
    listed = {c for c in all_checkers() if c.startswith(("anna.", "tint."))}
    assert listed <= labels.keys(), sorted(listed - labels.keys())
    for claim, label in labels.items():
        if not claim.startswith(("anna.", "tint.")):
            continue
        traced = claim in SIDES or claim in FORMULA_REFERENCED
        assert (label == "independent") == traced, f"{claim}: the page says {label}"
        assert label == all_checkers()[claim].evidence, f"{claim}: the page says {label}, its checker otherwise"


def test_a_checker_declares_independent_exactly_when_its_run_is_traced_here():
    """The evidence ``attnsim claims`` shows (each checker's declaration) agrees with this file's tables, all papers."""
    for claim, chk in all_checkers().items():
        if not claim.startswith(("two_heads.", "anna.", "tint.")):
            continue  # a plug-in paper's checker (docs/extending.md) may leave its evidence undeclared
        traced = claim in SIDES or claim in FORMULA_REFERENCED
        assert chk.evidence is not None, f"{claim} declares no evidence"
        assert (chk.evidence == "independent") == traced, f"{claim} declares {chk.evidence}"
