"""The figures of docs/tint_network.md that tests/tint/test_three_counts.py does not hold to the page: the one-pass
network's depth and stream (the prefix sets of Def 2.1, width (S + 1) D), its parameter counts for the tiny model
and for GPT-2 (Table 3's count, distinct arrays, effective), the structure-against-perturbation figures, the
stream's width split, and the error bits of the SGD step (Fig. 1, §2.7) against torch."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from doc_page import Page

from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import CASES
from attnsim.sim.tint.configs import published
from attnsim.sim.tint.network import Network
from attnsim.sim.tint.network_effective import effective_marks
from attnsim.sim.tint.network_size import NetworkSize, count, width_split
from attnsim.verify.check import run_check
from attnsim.verify.claims.tint_sizes import built_network
from attnsim.verify.tint_effective import compare, network_and_windows, perturbation_marks

_PAGE = Page("tint_network.md")
DOC = _PAGE.text
TEXT = _PAGE.flat
_table = _PAGE.table
N = r"\d[\d,]*"


def _n(s: str) -> int:
    return int(s.replace(",", ""))


@cache
def _gpt2() -> tuple[Network, NetworkSize, dict[str, int]]:
    """GPT-2 with the README settings, built as tint.size builds it (shapes and zero pattern only)."""
    net = built_network(*published("gpt2"))
    return net, count(net), width_split(net)


@cache
def _tiny_size() -> dict[str, Any]:
    return run_check("tint.size", {"aux": "tiny"}, None, 0)["extra"]


@cache
def _step(case: str) -> dict[str, Any]:
    return run_check("tint.sgd_step", {"case": case, "approximations": False}, "float64", 0)


def test_depth_and_stream_of_the_tiny_and_gpt2_networks():
    """'For the tiny auxiliary model (D = 8, 2 layers, K = 2, H = 40) the network has 145 layers on a stream of
    8 rows x 2052 columns; for GPT-2 ..., 825 layers and 1,044,469 columns.'"""
    m = re.search(rf"tiny auxiliary model \(D = (\d+), (\d+) layers, K = (\d+), H = (\d+)\) the network has ({N}) "
                  rf"layers on a stream of (\d+) rows × ({N}) columns; for GPT-2 with the README settings, ({N}) "
                  rf"layers and ({N}) columns", TEXT)
    assert m
    c = CASES["tiny-relu"]
    net = _step("tiny-relu")["extra"]["network"]
    assert (c.aux.D, c.aux.layers, c.tint.K, net["module_width_H"]) == (int(m[1]), int(m[2]), int(m[3]), int(m[4]))
    assert (net["depth"], net["stream_rows"], net["stream_width"]) == (_n(m[5]), int(m[6]), _n(m[7]))
    gpt2, _, _ = _gpt2()
    assert (gpt2.depth, gpt2.width) == (_n(m[8]), _n(m[9]))


def test_prefix_slots_and_module_width():
    """Def 2.1's prefix area: one slot of width H = (S + 1) D per prefix set, 18 per auxiliary layer and one for
    ln_f."""
    m = re.search(r"one slot of width H = \(S \+ 1\)·D per prefix set \(Def 2.1\): (\d+) per auxiliary layer", TEXT)
    assert m and "and one for ln_f" in TEXT
    per_layer = int(m[1])
    tiny = _tiny_size()["width_split"]
    c = CASES["tiny-relu"]
    assert tiny["prefix_sets"] == per_layer * c.aux.layers + 1
    assert tiny["D_sim"] == (c.tint.S(c.aux) + 1) * c.aux.D == _step("tiny-relu")["extra"]["network"]["module_width_H"]
    a, cfg = published("gpt2")
    _, _, w = _gpt2()
    assert w["prefix_sets"] == per_layer * a.layers + 1
    assert w["D_sim"] == (cfg.S(a) + 1) * a.D


def test_gpt2_parameter_counts():
    """The GPT-2 count as instantiated (what Table 3 counts), its non-zero entries and zero share, and each
    distinct module counted once (§2.8)."""
    m = re.search(rf"For GPT-2 \(K = (\d+), H_sim = (\d+), all (\d+) layers simulated, one step, modules reused as "
                  rf"in the README\): ({N}) parameters, of which ({N}) are non-zero \(([\d.]+)% zeros at "
                  rf"construction\); with each distinct module counted once .*?, ({N})\.", TEXT)
    assert m
    a, cfg = published("gpt2")
    assert (cfg.K, cfg.H_sim, cfg.simulated(a), cfg.steps) == (int(m[1]), int(m[2]), int(m[3]), 1)
    assert cfg.reuse_forward and cfg.reuse_backward
    _, size, _ = _gpt2()
    assert (size.total, size.nonzero, size.shared_total) == (_n(m[4]), _n(m[5]), _n(m[7]))
    assert round(100 * (1 - size.nonzero / size.total), 1) == float(m[6])


def test_three_counts_table():
    """The three counts of tint.size. GPT-2's effective count is not recomputed here: its structural search takes
    12 CPU seconds or more; the tiny network's is."""
    rows = {r[0]: r for r in _table("| count | what it counts | GPT-2 | tiny (D = 8) |")}
    assert set(rows) == {"as instantiated", "distinct arrays", "effective"}
    three = _tiny_size()["three_counts"]
    assert three["as_instantiated"] == _n(rows["as instantiated"][3])
    assert three["distinct_arrays"] == _n(rows["distinct arrays"][3])
    assert three["effective"] == _n(rows["effective"][3])
    _, size, _ = _gpt2()
    assert size.total == _n(rows["as instantiated"][2])
    assert size.shared_total == _n(rows["distinct arrays"][2])
    # the effective count the text says the rows' split led to
    m = re.search(rf"Telling the rows apart lowered the GPT-2 count from {N} \(every row taken together\) to ({N}), "
                  rf"and the tiny network's from {N} to ({N})\.", TEXT)
    assert m and _n(m[1]) == _n(rows["effective"][2]) and _n(m[2]) == three["effective"]


def test_module_entries_and_the_structural_count():
    """'Over all 90,230 module entries: 32,131 by structure' (each module object of the tiny network once). The
    perturbation figures beside them (32,045; 86 = 38 + 48) take about 4 CPU minutes
    (python -m attnsim.verify.tint_effective) and are not rerun here."""
    m = re.search(rf"Over all ({N}) module entries: ({N}) by structure, ({N}) by perturbation, ({N}) counted by the "
                  rf"structure alone", TEXT)
    assert m
    tiny = _tiny_size()
    assert tiny["modules_shared"] == _n(m[1])
    assert tiny["three_counts"]["effective_modules"] == _n(m[2])
    assert _n(m[2]) - _n(m[3]) == _n(m[4])  # no entry is counted by perturbation alone


def test_ln_f_backward_layer_norm_difference():
    """ln_f's backward: the entries of its layer-norm difference that the structure counts and perturbation does
    not, with four of the eight tokens training tokens and with all eight."""
    m = re.search(r"ln_f's backward \((\w+) entries of its layer-norm difference at (\w+) training tokens, (\w+) "
                  r"when all (\w+) are training tokens\)", TEXT)
    assert m
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
    c = CASES["tiny-relu"]
    assert c.aux.positions == words[m[4]]  # every position occurs
    for n_train, said in ((words[m[2]], words[m[1]]), (words[m[4]], words[m[3]])):
        net, uses, ctx = network_and_windows(c, get_arith("float64"), n_train=n_train)
        ops = {id(lay.op) for lay, _ in uses if lay.tag == "Grad" and getattr(lay.op, "name", "") == "LNFD"}
        assert len(ops) == 1
        row = compare(effective_marks(net), perturbation_marks(net, uses, ctx, ops))
        assert row["perturbation_only"] == 0 and row["structure_only"] == said, (n_train, row)


def test_gpt2_width_split():
    """The stream's columns by what they hold, against the paper's width D_sim = (S + 1) D."""
    m = re.search(rf"for GPT-2, ({N}) columns, (\d+)x D_sim = ({N}): ({N}) columns of prefix area \((\d+) sets of "
                  rf"({N})\), ({N}) of carried activations, ({N}) of gradients, ({N}) of logits and targets, ({N}) of "
                  rf"hidden states, ({N}) of positions and the prefix mask\.", TEXT)
    assert m
    _, _, w = _gpt2()
    assert w["stream_width"] == _n(m[1]) and round(w["stream_width"] / w["D_sim"]) == int(m[2])
    assert w["D_sim"] == _n(m[3]) == _n(m[6])
    assert (w["prefix_area"], w["prefix_sets"]) == (_n(m[4]), int(m[5]))
    assert (w["carried_activations"], w["gradients"]) == (_n(m[7]), _n(m[8]))
    assert w["logits"] + w["targets_and_loss_mask"] == _n(m[9])
    assert (w["hidden_states"], w["positions_and_prefix_mask"]) == (_n(m[10]), _n(m[11]))


def test_error_bits_against_torch():
    """tint.sgd_step in float64 against the torch reference, per case. These are round-off figures that move by
    a few tenths of a bit with the order of the BLAS sums, so each is held to within one bit of the page."""
    rows = _table("| case | D | layers | error bits | bits of the update itself |")
    assert len(rows) == 6
    fd_scale = int(re.search(r"float64, N = (\d+)", TEXT)[1])
    for label, D, layers, bits, step_bits in rows:
        name = label.split()[0]
        c = CASES[name]
        assert (c.aux.D, c.aux.layers) == (int(D), int(layers)), name
        lr = re.search(r"lr ([\de.-]+)", label)
        assert lr is None or c.tint.inner_lr == float(lr[1]), name
        r = _step(name)
        assert r["params"]["fd_scale"] == fd_scale, name
        assert r["verdict"] == "pass", name
        assert abs(r["error_bits"] - float(bits)) < 1.0, (name, r["error_bits"])
        assert abs(r["extra"]["step_bits"] - float(step_bits)) < 1.0, (name, r["extra"]["step_bits"])
