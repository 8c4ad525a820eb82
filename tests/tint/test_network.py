"""TinT as one network (tint.sgd_step, tint.size): one forward of the stacked layers equals the module
pipeline, its parameters are counted from its arrays, and the authors' convention moves the output bias 4x."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint import experiments as ex
from attnsim.sim.tint import network as nw
from attnsim.sim.tint import network_io as io
from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.builder import build
from attnsim.sim.tint.cases import CASES, Case
from attnsim.sim.tint.configs import TINY, TINY_TINT, TinTConfigError, published
from attnsim.sim.tint.network_size import count, entries
from attnsim.theory import tint_size
from attnsim.verify.tint_size import size_values

F64 = get_arith("float64")


_GELU_TOP1 = replace(CASES["tiny-gelu"], tint=replace(TINY_TINT, n_sim=1))


@pytest.mark.parametrize("c", [CASES[n] for n in ("tiny-relu", "tiny-gelu", "tiny-top1-2steps", "tiny-2steps-noreuse",
                                                  "d12-S4")] + [_GELU_TOP1], ids=lambda c: c.name + str(c.tint.n_sim))
def test_network_equals_pipeline_bit_for_bit_in_float64(c: Case) -> None:
    """OPT-style (ReLU) and GPT-2-style (GELU-new) auxiliary models, 1 and 2 updated layers, 1 and 2 steps."""
    r = ex.sgd_step(c, F64, pipeline=True)
    assert r.pipeline_equal and r.pipeline_bits == float("inf")
    assert ex.worst(r.errors) < 1e-9


def test_network_equals_reference_exactly_with_one_updated_layer() -> None:
    c = replace(CASES["tiny-relu"], tint=replace(TINY_TINT, n_sim=1))
    r = ex.sgd_step(c, get_arith("exact"))
    assert r.exact_equal and r.logits_equal


def test_forward_reads_only_the_stream() -> None:
    """Same stream in, same stream out; the input is not modified; the first rows hold the new weights."""
    c = CASES["tiny-relu"]
    w = am.init_weights(c.aux, F64, c.seed)
    net = nw.build_tint(c.aux, c.tint, F64, wte=w["wte"], wpe=w["wpe"])
    x0 = io.input_embedding(net, w, c.tokens, c.n_train)
    keep = x0.copy()
    a, b = nw.forward(net, x0), nw.forward(net, x0)
    assert np.array_equal(a, b) and np.array_equal(x0, keep)
    assert not np.array_equal(a[:net.geo.K, :net.prefix_width], x0[:net.geo.K, :net.prefix_width])
    assert net.depth == len(net.layers) > 100 and net.width > net.prefix_width


@settings(max_examples=5, deadline=None)
@given(n_sim=st.integers(1, 2), steps=st.integers(1, 3), rf=st.booleans(), rb=st.booleans())
def test_array_count_equals_the_size_formula(n_sim: int, steps: int, rf: bool, rb: bool) -> None:
    cfg = replace(TINY_TINT, n_sim=n_sim, steps=steps, reuse_forward=rf, reuse_backward=rb)
    size = count(nw.build_tint(TINY, cfg, F64))
    want = tint_size.breakdown(size_values(TINY, cfg))
    assert size.total == want.pop("total") and size.by_tag == want
    assert build(TINY, cfg, F64).ledger.by_tag("param") == size.by_tag  # the builder's own ledger agrees


def test_gpt2_count_from_arrays() -> None:
    aux, cfg = published("gpt2")
    size = count(nw.build_tint(aux, cfg, get_arith("count")))
    assert size.total == tint_size.count("total", size_values(aux, cfg))
    assert 0.9 < 1 - size.nonzero / size.total < 0.95  # mostly zeros at construction
    assert size.shared_total < size.total


def test_every_module_array_walk_matches_its_own_count() -> None:
    net = nw.build_tint(TINY, replace(TINY_TINT, steps=2, reuse_forward=False), F64, gate_scale=10.0)
    assert all(entries(lay.op)[0] == lay.op.n_params() for lay in net.module_layers())


def test_an_extra_array_changes_the_count() -> None:
    net = nw.build_tint(TINY, TINY_TINT, F64)
    before = count(net).total
    lay = next(lay for lay in net.module_layers() if lay.tag == "LinFwd")
    assert entries(lay.op)[0] == lay.op.n_params()
    copies = {m.copy for m in net.module_layers() if m.op is lay.op}
    lay.op.gate.a_old = np.zeros(lay.op.gate.a_old.size + 1)
    assert count(net).total == before + len(copies) == before + TINY.layers


def test_authors_convention_steps_the_output_bias_four_times() -> None:
    c = CASES["tiny-relu"]
    r = ex.sgd_step(c, F64, convention="authors")
    ratio = ex.bproj_ratio(c, F64, r)
    assert abs(ratio["least"] - 4) < 1e-6 and abs(ratio["largest"] - 4) < 1e-6
    assert ex.worst(r.errors) < 1e-9  # TinT under the authors' convention = the reference under it


def test_authors_convention_trains_the_last_position_when_everything_is_training() -> None:
    assert list(io.loss_positions(4, 4, "authors")) == [True] * 4
    assert list(io.loss_positions(4, 4)) == [True, True, True, False]
    assert list(io.loss_positions(5, 3, "authors")) == list(io.loss_positions(5, 3))
    c = Case("full", TINY, TINY_TINT, CASES["tiny-relu"].ids, 6)
    paper, authors = ex.sgd_step(c, F64), ex.sgd_step(c, F64, convention="authors")
    assert ex.worst(authors.errors) < 1e-9
    assert ex.worst(ex.group_errors(paper.got, authors.got)) > 0


def test_bad_convention_names_the_flag() -> None:
    with pytest.raises(TinTConfigError, match="--convention"):
        nw.build_tint(TINY, TINY_TINT, F64, convention="torch")


def test_each_authors_choice_measured_alone() -> None:
    from attnsim.sim.tint import reconcile

    eff = reconcile.effects(CASES["tiny-relu-all-train"], F64)
    assert eff["attn_mask"]["weights"] == 0.0  # the upstream gradient is 0 on test positions
    assert eff["last_position"]["weights"] > 0 and eff["bias_full_step"]["bproj"] > 0
    assert abs(eff["bias_full_step"]["bproj_step_ratio"]["largest"] - 4) < 1e-6
    assert all(e["equals_reference"] for e in eff.values())
