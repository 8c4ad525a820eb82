"""Broken twins of the TinT size checkers (tint.size, tint.under_2b; :mod:`attnsim.verify.claims.tint_sizes`):
the network built with an extra weight array, counted without its gates, or with every use of a module
its own instance; and the size formula or the abstract's ceiling mistranscribed."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.verify.twins import twin
from attnsim.verify.twins._kit import formula_shifted


@contextmanager
def extra_array(block: str) -> Iterator[None]:
    """The network's ``block`` ("forward_block" | "backward_block") is built with one more weight
    array: an extra MX(d) map in its activation module."""
    from attnsim.sim.tint import network
    from attnsim.sim.tint.layers import Mixer

    original = getattr(network, block)

    def broken(ar: Any, geo: Any, *a: Any, **kw: Any) -> Any:
        b = original(ar, geo, *a, **kw)
        b.act.layers.append(Mixer.zeros(ar, geo.H, geo.d))
        return b

    with mock.patch(f"attnsim.sim.tint.network.{block}", broken):
        yield


@twin("tint.size", "total_formula_plus_one", "the total-size formula is read one parameter too high",
      params={"aux": "tiny"}, kind="formula")
@contextmanager
def _size_formula() -> Iterator[None]:
    with formula_shifted("tint.size", "total"):
        yield


@twin("tint.size", "activation_module_extra_array", "each forward block's activation module is built with an extra "
      "MX(d) weight array", params={"aux": "tiny"}, kind="construction")
@contextmanager
def _size_extra() -> Iterator[None]:
    with extra_array("forward_block"):
        yield


@twin("tint.size", "gates_not_counted", "the count skips every gate's arrays", params={"aux": "tiny"},
      kind="ledger")
@contextmanager
def _size_gates() -> Iterator[None]:
    from attnsim.sim.tint import network_size
    from attnsim.sim.tint.layers import Gate

    original = network_size.arrays

    def arrays(obj: Any) -> Any:
        return iter(()) if isinstance(obj, Gate) else original(obj)

    with mock.patch("attnsim.sim.tint.network_size.arrays", arrays):
        yield


@twin("tint.under_2b", "no_module_shared", "every use of a module is its own instance (Q/K/V, the 4 sub-MLPs and "
      "the reused blocks are not shared)", kind="construction")
@contextmanager
def _u2b_unshared() -> Iterator[None]:
    from attnsim.sim.tint.network import StreamPlan

    original = StreamPlan.mod

    def mod(self: Any, op: Any, at: tuple, *a: Any, **kw: Any) -> Any:
        copy, tag = at
        return original(self, op, (copy + (len(self.layers),), tag), *a, **kw)

    with mock.patch.object(StreamPlan, "mod", mod):
        yield


@twin("tint.under_2b", "ceiling_in_millions", "the abstract's ceiling is read as 2 million instead of 2 billion",
      kind="formula")
@contextmanager
def _u2b_ceiling() -> Iterator[None]:
    with mock.patch("attnsim.verify.claims.tint_sizes.tint_size.ceiling", lambda: 2 * 10 ** 6):
        yield
