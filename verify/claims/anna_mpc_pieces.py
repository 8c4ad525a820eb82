"""Checkers of the pieces ANNA's simulation of MPC is built of (App. B): Lemma B.4's sparse averaging code, and
Lemmas B.5 and B.6's input and output layers, each checked on its own against the data it moves."""

from __future__ import annotations

import math

import numpy as np

from attnsim.sim.anna.message_code import DecodingError, MessageCode
from attnsim.sim.anna.mpc_to_anna import MPCTransformer
from attnsim.sim.anna.transformer import size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims.anna_mpc_to_anna import EXACT
from attnsim.verify.registry import CheckContext, Measurement, Param, checker

# ---------------------------------------------------------------- Lemma B.4: the sparse averaging code

@checker("anna.lemma_b_4", evidence="independent", numerics=EXACT, params=[
    Param("q", int, 4096, "sender ids", minimum=2),
    Param("alpha", int, 4, "messages averaged together (at most)", minimum=1),
    Param("Delta", int, 8, "payload numbers per message", minimum=1),
    Param("trials", int, 200, "random sets of alpha senders (and as many of alpha + 2)", minimum=1),
], grid=lambda quick: [{"alpha": a, "trials": 50 if quick else 300} for a in (1, 2, 4, 8)])
def check_lemma_b_4(ctx: CheckContext) -> Measurement:
    """Average up to alpha encodings and decode every message; beyond alpha, failures are detected, never wrong."""
    q, alpha, delta, trials = (ctx.params[x] for x in ("q", "alpha", "Delta", "trials"))
    code = MessageCode.design(q, alpha, delta)
    rng = np.random.default_rng(ctx.seed)
    failures = wrong = detected = overloaded = 0
    for size in [alpha] * trials + [min(q, alpha + 2)] * trials:
        senders = [int(j) for j in rng.choice(q, size=size, replace=False)]
        payload = {j: [int(v) for v in rng.integers(-1000, 1001, size=delta)] for j in senders}
        total = sum(code.encode(j, payload[j]) for j in senders)
        try:
            got = code.decode(total, size)
        except DecodingError:
            failures += size <= alpha
            detected += size > alpha
            continue
        overloaded += size > alpha
        wrong += got != payload
    reasons = [f"{wrong} decodes returned a wrong message"] if wrong else []
    return Measurement(
        evidence="independent", reference="the encoded payloads themselves",
        agree=not wrong, error_bits=math.inf if not wrong else 0.0,
        counts={"dimension": code.width, "decoding_failures": failures, "wrong_decodes": wrong},
        derived={"base": code.base, "rows": code.rows, "digits": code.digits}, reasons=reasons,
        extra={"base": code.base, "rows": code.rows, "digits": code.digits, "trials": trials,
               "over_alpha_detected": detected, "over_alpha_decoded": overloaded},
    )


# ---------------------------------------------------------------- Lemmas B.5 and B.6: input and output layers

_IO_PARAMS = [Param("N", int, 1024, "input tokens", minimum=1),
              Param("block", int, 16, "tokens per machine (s / words per record)", minimum=1),
              Param("words", int, 3, "words per input record / output", minimum=1)]


def _io_model(ctx: CheckContext, tag: str) -> tuple[int, dict[int, list[tuple]], Ledger, MPCTransformer]:
    """The machines P, random records placed block by block, and a transformer writing to a fresh ledger."""
    N, b, w = (ctx.params[x] for x in ("N", "block", "words"))
    P = -(-N // b)
    rng = np.random.default_rng(ctx.seed)
    data = rng.integers(-10 ** 6, 10 ** 6, size=(N, w))
    placement = {m: [tuple(int(v) for v in data[i]) for i in range(m * b, min(N, (m + 1) * b))] for m in range(P)}
    ledger = Ledger()
    return P, placement, ledger, MPCTransformer(inputs=N, machines=P, block=b, base=2, memory=1, ledger=ledger,
                                                tag=tag)


def _io_measurement(ledger: Ledger, P: int, same: bool, reference: str, wrong: str) -> Measurement:
    """A layer's measurement: its size read off the ledger, and whether it moved every record where it belongs."""
    size = size_from_ledger(ledger)
    return Measurement(evidence="independent", reference=reference,
                       agree=same, error_bits=math.inf if same else 0.0,
                       counts={"layers": size["layers"], "heads": size["heads"], "embedding_dim": size["v_dim"]},
                       derived={"machines": P}, reasons=[] if same else [wrong],
                       extra={"machines": P, "qk_dim": size["qk_dim"]})


@checker("anna.lemma_b_5", evidence="independent", numerics=EXACT, params=_IO_PARAMS,
         grid=lambda quick: [{"block": b} for b in (1, 4, 16, 64)])
def check_lemma_b_5(ctx: CheckContext) -> Measurement:
    """One EMA head moves every input record onto machine i // block, in order."""
    P, placement, ledger, model = _io_model(ctx, "lemma_b_5")
    return _io_measurement(ledger, P, model.place(placement) == placement, "the input placement itself",
                           "a machine holds other records than its block")


@checker("anna.lemma_b_6", evidence="independent", numerics=EXACT, params=_IO_PARAMS,
         grid=lambda quick: [{"block": b} for b in (1, 4, 16, 64)])
def check_lemma_b_6(ctx: CheckContext) -> Measurement:
    """One EMA head hands token i the output machine i // block holds for it."""
    P, placement, ledger, model = _io_model(ctx, "lemma_b_6")
    b = ctx.params["block"]
    outputs = {m: {m * b + t: rec for t, rec in enumerate(recs)} for m, recs in placement.items()}
    same = model.readout(outputs) == [rec for m in range(P) for rec in placement[m]]
    return _io_measurement(ledger, P, same, "the machines' outputs in token order",
                           "a token read another token's output")
