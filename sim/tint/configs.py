"""Auxiliary-model and TinT configurations, and the published ones written out (no downloads).

An :class:`AuxConfig` describes the pre-LN decoder TinT fine-tunes (docs/reconstructions.md); a
:class:`TinTConfig` the simulator's hyperparameters (§2.4: K prefixes, S = D/K rows stacked per
prefix, width D_sim = (S+1) D, H_sim softmax heads; §2.7: simulated layers, SGD steps, reuse).
:func:`validate` returns the reasons a pair is unusable; :func:`check` raises the first one as a
:class:`TinTConfigError` naming the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from attnsim.sim.errors import AttnsimError

ACTIVATIONS = ("gelu_new", "relu")


class TinTConfigError(AttnsimError):
    """A configuration TinT cannot be built for; the message names the parameter."""


@dataclass(frozen=True)
class AuxConfig:
    """A pre-LN GPT-2/OPT-style decoder: width D, H_aux heads, L layers, vocabulary V, T positions."""

    name: str
    D: int
    heads: int
    layers: int
    vocab: int
    positions: int
    activation: str = "gelu_new"
    prenorm: bool = True
    pos_table: int | None = None  # rows of the positional table (OPT keeps 2 extra); default T

    @property
    def d_head(self) -> int:
        """Width of one auxiliary head."""
        return self.D // self.heads

    @property
    def pos_rows(self) -> int:
        """Rows of the positional table (OPT stores an offset of 2)."""
        return self.positions if self.pos_table is None else self.pos_table


@dataclass(frozen=True)
class TinTConfig:
    """TinT hyperparameters (§2.4, §2.7; the authors' code's ``Construct_config``)."""

    K: int
    H_sim: int
    n_sim: int | None = None  # simulated (top) layers; None = all
    steps: int = 1
    reuse_forward: bool = True
    reuse_backward: bool = True
    inner_lr: float = 1e-6

    def S(self, aux: AuxConfig) -> int:
        """Weight rows stacked per prefix, S = D/K (§2.4)."""
        return aux.D // self.K

    def width(self, aux: AuxConfig) -> int:
        """TinT's width D_sim = (S + 1)·D."""
        return (self.S(aux) + 1) * aux.D

    def simulated(self, aux: AuxConfig) -> int:
        """How many top auxiliary layers are simulated."""
        return aux.layers if self.n_sim is None else self.n_sim

    def position_dim(self, aux: AuxConfig) -> int:
        """Width of the one-hot position vectors: token positions plus prefixes."""
        return aux.positions + self.K


def validate(aux: AuxConfig, tint: TinTConfig) -> list[tuple[str, str]]:
    """Every reason (parameter, why) the pair cannot be built; empty when it can."""
    bad: list[tuple[str, str]] = []
    if not aux.prenorm:
        bad.append(("prenorm", f"{aux.name} is post-LN; TinT simulates pre-LN decoders only (docs/reconstructions.md)"))
    if aux.activation not in ACTIVATIONS:
        bad.append(("activation", f"{aux.activation!r} is not one of {', '.join(ACTIVATIONS)}"))
    for field_name in ("D", "heads", "layers", "vocab", "positions"):
        if getattr(aux, field_name) < 1:
            bad.append((field_name, f"must be >= 1, got {getattr(aux, field_name)}"))
    if aux.heads >= 1 and aux.D % aux.heads:
        bad.append(("heads", f"aux heads {aux.heads} must divide D = {aux.D}"))
    if tint.K < 1 or aux.D % max(tint.K, 1):
        bad.append(("K", f"the number of prefixes K = {tint.K} must divide D = {aux.D} (S = D/K rows per prefix)"))
        return bad
    S = tint.S(aux)
    if S < 3:
        bad.append(("K", f"S = D/K = {S} but TinT needs S >= 3: the attention backward reads its input in "
                         "[0, D) and its memory [Qx, Kx, x] in the last 3D coordinates of width (S+1) D"))
    width = tint.width(aux)
    if tint.H_sim < 1 or width % tint.H_sim:
        bad.append(("H_sim", f"TinT softmax heads H_sim = {tint.H_sim} must divide the width (S+1) D = {width}"))
        return bad
    d_sim = width // tint.H_sim
    if aux.D % d_sim:
        bad.append(("H_sim", f"the TinT head dim (S+1) D / H_sim = {d_sim} must divide D = {aux.D}"))
    if aux.heads >= 1 and aux.D % aux.heads == 0 and d_sim % aux.d_head:
        bad.append(("H_sim", f"an aux head (dim {aux.d_head}) must fit in one TinT head (dim {d_sim})"))
    if tint.H_sim < aux.heads:
        bad.append(("H_sim", f"H_sim = {tint.H_sim} must be >= the aux heads {aux.heads} (one TinT head per aux head)"))
    if tint.n_sim is not None and not 1 <= tint.n_sim <= aux.layers:
        bad.append(("n_sim", f"simulated layers must be in 1..{aux.layers}, got {tint.n_sim}"))
    if tint.steps < 1:
        bad.append(("steps", f"SGD steps must be >= 1, got {tint.steps}"))
    return bad


def check(aux: AuxConfig, tint: TinTConfig) -> None:
    """Raise :class:`TinTConfigError` for the first reason :func:`validate` gives."""
    reasons = validate(aux, tint)
    if reasons:
        name, why = reasons[0]
        raise TinTConfigError(why, param=name)


# --------------------------------------------------------------------------------------------------
# Published auxiliary models (HF configs) and the README's TinT settings for them
# (docs/reconstructions.md, "Parameter counts per module (Table 3)").
# GPT-2: tied embeddings, GELU-new, T = 1024 learned positions. OPT: ReLU, T = 2048 learned positions
# stored with an offset of 2 rows (T' = 2048 + 2). opt-350m is post-LN (unsupported).
# --------------------------------------------------------------------------------------------------
_GPT2 = dict(vocab=50257, positions=1024, activation="gelu_new")
_OPT = dict(vocab=50272, positions=2048, activation="relu", pos_table=2050)

PUBLISHED: dict[str, tuple[AuxConfig, TinTConfig]] = {
    "gpt2": (AuxConfig("gpt2", 768, 12, 12, **_GPT2), TinTConfig(K=256, H_sim=12)),
    "gpt2-medium": (AuxConfig("gpt2-medium", 1024, 16, 24, **_GPT2), TinTConfig(K=256, H_sim=20)),
    "gpt2-large": (AuxConfig("gpt2-large", 1280, 20, 36, **_GPT2), TinTConfig(K=320, H_sim=20)),
    "gpt2-xl": (AuxConfig("gpt2-xl", 1600, 25, 48, **_GPT2), TinTConfig(K=320, H_sim=30)),
    "opt-125m": (AuxConfig("opt-125m", 768, 12, 12, **_OPT), TinTConfig(K=256, H_sim=12)),
    "opt-350m": (AuxConfig("opt-350m", 1024, 16, 24, prenorm=False, **_OPT), TinTConfig(K=256, H_sim=20)),
    "opt-1.3b": (AuxConfig("opt-1.3b", 2048, 32, 24, **_OPT), TinTConfig(K=512, H_sim=40)),
    "opt-2.7b": (AuxConfig("opt-2.7b", 2560, 32, 32, **_OPT), TinTConfig(K=640, H_sim=40)),
}

LISTED = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "opt-125m", "opt-1.3b", "opt-2.7b")


def published(name: str, **tint_overrides: object) -> tuple[AuxConfig, TinTConfig]:
    """The published aux config and the README TinT settings, optionally overridden."""
    if name not in PUBLISHED:
        raise TinTConfigError(f"unknown auxiliary model {name!r}; known: {', '.join(PUBLISHED)}", param="aux")
    aux, tint = PUBLISHED[name]
    return aux, replace(tint, **tint_overrides)  # type: ignore[arg-type]


TINY = AuxConfig("tiny", D=8, heads=2, layers=2, vocab=16, positions=8, activation="relu")
TINY_TINT = TinTConfig(K=2, H_sim=10, inner_lr=0.25)
