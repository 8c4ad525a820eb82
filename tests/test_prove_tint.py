"""``attnsim prove tint``: TinT's stream layout proved for symbolic widths on the walk the network runs, and
planted layout bugs found by the prover and failed by the exact check."""

from __future__ import annotations

from attnsim.verify.prove import beyond, tint
from attnsim.verify.prove.tint_twins import TWINS


def _first_shape(name: str) -> object:
    return next(o for o in tint.obligations() if o.name == name)


def test_layout_of_the_smallest_shape_is_proved() -> None:
    for name in ("registers", "frame", tint.WALK):
        row = beyond.prove_one(_first_shape(name), second=name == "frame")
        assert row.status == "proved", row
        if name == "frame":
            assert row.cvc5 == "unsat"


def test_layout_reads_widths_symbolically() -> None:
    regs = tint.plan(tint.SHAPES[0]).registers
    assert str(regs["target"][1]) == "V" and str(regs["pos"][1]) == "P" and str(regs["h0"][1]) == "D"


def test_overlapping_register_gives_a_counterexample() -> None:
    t = next(t for t in TWINS if t.name == "overlapping_register")
    with t.breaks():
        row = beyond.prove_one(_first_shape("registers"), second=False)
    assert row.status == "counterexample" and {"D", "P", "V"} <= set(row.counterexample or {})


def test_read_before_write_is_caught_and_its_replay_fails() -> None:
    t = next(t for t in TWINS if t.name == "read_before_write")
    with t.breaks():
        row = beyond.prove_one(_first_shape(tint.WALK), second=False)
        assert row.status == "counterexample" and row.counterexample["register"] == "L0.ln1.y"
        replayed = beyond.replay(t.claim, t.replay({"steps": 1}), t.numerics)
    assert replayed["verdict"] == "fail", replayed
