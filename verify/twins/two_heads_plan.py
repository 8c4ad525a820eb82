"""Broken call plans of the exact Two Heads constructions (kind ``plan``).

Each twin patches one function of ``sim/two_heads/plan.py``. The construction and the prover both
read the plan from there, so the same break makes ``attnsim prove`` find a counterexample (which it
replays as an exact check that must fail) and makes the ordinary check fail in ``attnsim teeth``.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Callable, Iterator
from unittest import mock

from attnsim.sim.two_heads import plan as P
from attnsim.verify.twins import twin


@contextmanager
def _layout_broken(name: str, change: Callable[..., P.Layout]) -> Iterator[None]:
    """``plan.<name>`` returns ``change(layout, *args)`` instead of its layout."""
    original = getattr(P, name)

    def broken(*args: Any) -> P.Layout:
        return change(original(*args), *args)

    with mock.patch.object(P, name, broken):
        yield


def _segs(lay: P.Layout, what: str) -> list[int]:
    return [n for n, s in enumerate(lay.segs) if s.what == what]


def key_range_short() -> Any:
    """Lemma 3.1: each call's key range ends one token early; the block's last key becomes a padding row."""
    def change(lay: P.Layout, *args: Any) -> P.Layout:
        segs = list(lay.segs)
        k, pad = _segs(lay, "key")[0], _segs(lay, "pad")[0]
        segs[k] = replace(segs[k], hi=segs[k].hi - 1)
        segs[pad] = replace(segs[pad], lo=segs[pad].lo - 1)
        return replace(lay, segs=tuple(segs))
    return _layout_broken("pair_layout", change)


def pad_dropped() -> Any:
    """Lemma 3.1 / Theorem 3.4: the decoder leaves one padding row out of its constant."""
    def change(lay: P.Layout, ops: Any, *args: Any) -> P.Layout:
        extra = lay.units - (1 if lay.norm else 0)  # padding rows beyond the synthetic token
        return replace(lay, units=ops.ite(extra > 0, lay.units - 1, lay.units))
    return _layout_broken("pair_layout", change)


def diagonal_to_high() -> Any:
    """Theorem 3.5: the ratio call's reversed layout without its shift row, so the key of the query's
    own offset (the diagonal) goes to the ``high`` call as well as to the ``low`` one."""
    def change(lay: P.Layout, b: Any, bq: Any, bk: Any, q0: Any, k0: Any, part: str, step: str) -> P.Layout:
        if part != "high" or step != "ratio":
            return lay
        segs = list(lay.segs)
        k = _segs(lay, "key")[0]
        segs[k] = replace(segs[k], lo=segs[k].lo - 1, hi=segs[k].hi - 1)
        return replace(lay, segs=tuple(segs))
    return _layout_broken("causal_layout", change)


def own_key_short() -> Any:
    """Claim B.6: the block's own normaliser call drops its last key."""
    def change(lay: P.Layout, *args: Any) -> P.Layout:
        segs = list(lay.segs)
        k = _segs(lay, "key")[0]
        segs[k] = replace(segs[k], hi=segs[k].hi - 1)
        return replace(lay, segs=tuple(segs))
    return _layout_broken("causal_layout", change)


def window_edge() -> Any:
    """Theorem 5.1: the shifted prefix S starts one key late, so the window is one key wider than r."""
    def change(lay: P.Layout, ops: Any, N: Any, b: Any, r: Any, s: Any, part: str, *rest: Any) -> P.Layout:
        if part != "S":
            return lay
        segs = list(lay.segs)
        k = _segs(lay, "key")[0]
        segs[k] = replace(segs[k], first=segs[k].first + 1)
        return replace(lay, segs=tuple(segs))
    return _layout_broken("window_layout", change)


def sink_twice() -> Any:
    """Theorem 5.1 with sinks: the first row of P's local window holds the last sink instead of the
    window's first token, so that sink is counted twice (and the window's first key is lost)."""
    def change(lay: P.Layout, ops: Any, N: Any, b: Any, r: Any, s: Any, part: str, *rest: Any) -> P.Layout:
        if part != "P":
            return lay
        segs = list(lay.segs)
        n = _segs(lay, "key")[1]
        local = segs[n]
        first = replace(local, hi=local.lo + 1, first=ops.ite(s > 0, s - 1, local.first))
        rest_ = replace(local, lo=local.lo + 1, first=local.first + 1)
        return replace(lay, segs=tuple(segs[:n] + [first, rest_] + segs[n + 1:]))
    return _layout_broken("window_layout", change)


@contextmanager
def slot_collision() -> Iterator[None]:
    """Lemma 3.3: every job goes to oracle layer 0 of its head, so jobs of one head share a slot."""
    original = P.pack_slot

    def broken(ops: Any, k: Any, per_call: Any, layers: Any) -> tuple[Any, Any, Any]:
        call, head, _ = original(ops, k, per_call, layers)
        return call, head, 0

    with mock.patch.object(P, "pack_slot", broken):
        yield


def _add(claim: str, name: str, what: str, breaks: Callable[[], Any], params: dict[str, Any] | None = None) -> None:
    twin(claim, name, what, kind="plan", params=params)(breaks)


_add("two_heads.lemma_3_1", "plan_key_range_short", "each call's key range ends one token early", key_range_short)
_add("two_heads.lemma_3_1", "plan_pad_dropped", "the decoder leaves one padding row out of its constant",
     pad_dropped, {"N": 13, "M": 4, "d": 2})
_add("two_heads.cor_3_2", "plan_key_range_short", "each call's key range ends one token early", key_range_short)
_add("two_heads.lemma_3_3", "plan_slot_collision", "the jobs of a head all go to oracle layer 0",
     slot_collision, {"Hp": 1, "Lp": 2})
_add("two_heads.thm_3_4", "plan_pad_dropped", "the decoder leaves one padding row out of its constant",
     pad_dropped)
_add("two_heads.thm_3_5", "plan_diagonal_to_high", "the causal diagonal goes to the reversed call too",
     diagonal_to_high)
_add("two_heads.claim_b_6", "plan_own_key_short", "the own normaliser call drops the block's last key",
     own_key_short)
_add("two_heads.thm_1_1", "plan_diagonal_to_high", "the causal diagonal goes to the reversed call too",
     diagonal_to_high, {"causal": True})
_ONE_LAYER = {"N": 16, "M": 6, "d": 2, "H": 1, "L": 1}  # a wrong window sum grows without bound over layers
for _claim in ("two_heads.thm_5_1", "two_heads.thm_1_4"):
    _add(_claim, "plan_window_edge", "the shifted prefix starts one key late: the window is r + 1 wide",
         window_edge, {"sinks": 0, **_ONE_LAYER})
    _add(_claim, "plan_sink_twice", "the local window's first row holds the last sink: that sink counted twice",
         sink_twice, {"sinks": 1, **_ONE_LAYER})
