"""Where attnsim's TinT and the authors' code part ways, each difference measured alone (tint.sgd_step;
docs/tint_reconciliation.md).

:func:`effects` runs the built network with one of the authors' choices switched on at a time (the
4 output-bias shares each given the full step; the last position trained on when the whole sequence
is the training part; their attention-backward mask) and all three together, against the paper's
SGD step on the same case, and reports how far the updated weights and the final logits move.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from attnsim.sim.tint.arith import Arith, max_abs_diff
from attnsim.sim.tint.cases import Case
from attnsim.sim.tint.experiments import bproj_ratio, group_errors, sgd_step, worst
from attnsim.sim.tint.network import Convention, forward
from attnsim.sim.tint.network_io import input_embedding
from attnsim.sim.tint.network_io import logits as network_logits


def _final_logits(r: Any, c: Case) -> Any:
    return network_logits(r.net, forward(r.net, input_embedding(r.net, r.weights, c.tokens, c.n_train)))


def effects(c: Case, ar: Arith) -> dict[str, dict[str, Any]]:
    """Per switch (and ``authors`` = all three): largest move of any updated weight, of b_proj, of the
    final logits, the b_proj step over the paper's, and whether TinT still equals the reference
    taken with the same convention."""
    paper = sgd_step(c, ar)
    base_logits = _final_logits(paper, c)
    out: dict[str, dict[str, Any]] = {}
    switches = [Convention(**{f.name: True}) for f in fields(Convention)] + [Convention.named("authors")]
    for conv in switches:
        r = sgd_step(c, ar, convention=conv)
        moved = group_errors(r.got, paper.got)
        out[conv.label] = {"weights": worst(moved), "bproj": moved["bproj"],
                           "logits": max_abs_diff(_final_logits(r, c), base_logits),
                           "bproj_step_ratio": bproj_ratio(c, ar, r), "equals_reference": r.exact_equal
                           if ar.kind == "exact" else worst(r.errors) < 1e-9}
    return out
