"""ANNA's two experiments reproduced (§6, App. G): softmax surrogates trained with torch on CPU, then run with
attnsim's Algorithm 1, compared point by point with the paper's Figure 1.

Modules: :mod:`.surrogate` (the model), :mod:`.tasks` (the data), :mod:`.training` (seeded, resumable
training), :mod:`.anna_layer` and :mod:`.evaluate` (Algorithm 1 in place of the softmax, over the paper's
grid), :mod:`.match2` and :mod:`.induction` (the two experiments), :mod:`.compare` (the paper's numbers
against ours), :mod:`.figures` (Fig. 1a, 1b), :mod:`.store` (verified results), :mod:`.command` (what the
command line and the report call). Everything but :mod:`.compare`, :mod:`.store` and this file imports
torch, so import those modules only once torch is known to be there (:func:`torch_missing`).
"""

from __future__ import annotations

from importlib.util import find_spec

EXPERIMENTS = ("anna.match2", "anna.induction")
"""The experiment ids, as ``attnsim experiment`` takes them."""


def torch_missing() -> str | None:
    """Why the experiments cannot run here (torch is not installed), or None."""
    if find_spec("torch") is None:
        return "the experiments train with torch, which is not installed; pip install -e '.[torch]'"
    return None
