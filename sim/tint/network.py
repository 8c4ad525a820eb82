"""TinT as one network: a single stack of layers over one residual stream (tint.sgd_step, Fig. 1; §2.7).

:func:`build_tint` lays out the stream and lists the layers; :func:`forward` runs them, one call,
with no state outside the stream. The stream is a matrix of K prefix rows and n token rows:

* **prefix area** (prefix rows): one H-wide slot per prefix set (Def 2.1): the 18 sets of every
  auxiliary layer and ln_f's. The prefix embeddings *are* the auxiliary weights; descent layers
  rewrite their slot, so after the pass the area holds the updated weights.
* **registers** (token rows): the token embedding, every activation the backward pass needs (the
  code's "memories"), the gradients flowing down, the next-token targets and the loss mask, and the
  logits of the first and the final forward pass.
* **positions and train flag** (all rows): the one-hot p_t of Def 2.3 and the prefix mask; the
  attention masks every layer uses are read off these two.

Each layer is a TinT module with fixed weights of its own (``layers.Module``: attention with its heads,
MLP, layer norm, linear attention; or a backward || descent ``Parallel``), a fixed linear combination
of registers (residual additions, the sum of the 4 sub-MLPs), or the tied read-out E (the loss gradient
and the logits). A module layer reads its input through a fixed 0/1 routing: its prefix slot into the
prefix rows, its content registers into [0, w) and its memory registers into the tail [H - m, H) of the
token rows (where the code keeps memories); it writes token coordinates [0, D) to one register and,
for a descent, its prefix rows back to its slot. A write replaces the register: the residual update
``stream + E_r (value - E_r^T stream)``, which is the same thing in exact arithmetic.

The modules are built once per module type (their weights are fixed functions of the configuration,
§2.8); each layer names the copy it stands for (per auxiliary layer, per SGD step as the reuse flags
say), so the parameter count reads the arrays of every copy, as the authors' code instantiates them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import Arith
from attnsim.sim.tint.builder import (
    N_SUB,
    BackwardBlock,
    ForwardBlock,
    GradBlock,
    _sets_of_layer,
    backward_block,
    forward_block,
)
from attnsim.sim.tint.configs import AuxConfig, TinTConfig, TinTConfigError, check
from attnsim.sim.tint.layers import Context, Module, Parallel
from attnsim.sim.tint.modules import Geometry, linear_backward_descent, linear_forward
from attnsim.sim.tint.modules_nonlinear import ln_fd_backward, ln_normalise

CONVENTIONS = ("paper", "authors")


@dataclass(frozen=True)
class Convention:
    """Where the authors' code departs from the paper's SGD step (docs/tint_reconciliation.md)."""

    bias_full_step: bool = False   # each of the 4 output-bias shares takes the full step eta (4x on b_proj)
    last_position: bool = False    # with n_train = n, the last position's gradient (it has no target) is trained on
    attn_mask: bool = False        # attention backward keeps a_{t,j} for t = j or t in the training part only

    @staticmethod
    def named(name: "str | Convention") -> "Convention":
        """``paper`` (none of them) or ``authors`` (all three); a Convention passes through."""
        if isinstance(name, Convention):
            return name
        if name not in CONVENTIONS:
            raise TinTConfigError(f"--convention: must be one of {', '.join(CONVENTIONS)}; got {name!r}")
        return Convention(True, True, True) if name == "authors" else Convention()

    @property
    def label(self) -> str:
        """``paper``, ``authors``, or the switches that are on."""
        on = [f.name for f in dataclasses.fields(self) if getattr(self, f.name)]
        return "paper" if not on else "authors" if len(on) == 3 else "+".join(on)
G = (("grad",), "Grad")  # the final layer norm's modules: one copy, reused by every step


@dataclass
class ModuleLayer:
    """A TinT module applied through its fixed routing (see the module docstring)."""

    op: Module | Parallel
    copy: tuple          # which instance of the module this layer stands for (counting)
    tag: str             # module type, the size table's name (LNFwd, AttnFwd, LinBwdDesc, ...)
    content: tuple[str, ...] = ()
    memory: tuple[str, ...] = ()
    prefix: str | None = None
    out: str | None = None
    prefix_out: bool = False


@dataclass
class Combine:
    """out = sum of registers, folded left to right (residual additions, the 4 sub-MLPs' sum)."""

    terms: tuple[str, ...]
    out: str


@dataclass
class Readout:
    """The tied read-out E: logits = h E^T; with ``grad``, E^T (softmax(h E^T) - target) * loss mask."""

    src: str
    out: str
    grad: bool


Layer = ModuleLayer | Combine | Readout


@dataclass
class Network:
    """One stacked TinT: the stream's layout, the layers, and the embedding arrays (tied with E)."""

    aux: AuxConfig
    cfg: TinTConfig
    geo: Geometry
    ar: Arith
    layers: list[Layer]
    sets: list[str]                      # prefix slots, in column order
    registers: dict[str, tuple[int, int]]  # name -> (first column, width)
    wte: np.ndarray
    wpe: np.ndarray
    convention: Convention = field(default_factory=Convention)
    set_kinds: dict[str, str] = field(default_factory=dict)  # prefix slot -> kind (ln1, q, ..., lnf)

    @property
    def prefix_width(self) -> int:
        """Columns of the prefix area: one H-wide slot per prefix set."""
        return len(self.sets) * self.geo.H

    @property
    def width(self) -> int:
        """Columns of the stream."""
        return self.prefix_width + sum(w for _, w in self.registers.values())

    @property
    def depth(self) -> int:
        """Number of layers."""
        return len(self.layers)

    def slot(self, name: str) -> slice:
        """Columns of prefix slot ``name``."""
        i = self.sets.index(name)
        return slice(i * self.geo.H, (i + 1) * self.geo.H)

    def reg(self, name: str) -> slice:
        """Columns of register ``name`` (registers follow the prefix area)."""
        start, width = self.registers[name]
        return slice(self.prefix_width + start, self.prefix_width + start + width)

    def module_layers(self) -> Iterator[ModuleLayer]:
        """The layers that are TinT modules."""
        return (lay for lay in self.layers if isinstance(lay, ModuleLayer))


# ------------------------------------------------------------------------------------------- layout
INPUT_REGISTERS = ("pos", "train", "target", "loss_mask", "h0")
"""The registers :func:`~attnsim.sim.tint.network_io.input_embedding` writes before the first layer."""


@dataclass(frozen=True)
class StreamShape:
    """The loop shape of the stack: auxiliary layers, SGD steps, the first simulated layer, reuse flags."""

    layers: int
    steps: int
    start: int
    reuse_forward: bool
    reuse_backward: bool


def frame(H: Any, content: Any, memory: Any) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """Where a module layer's inputs sit in its H-wide token rows: its content registers in [0, content),
    its memory registers in [H - memory, H)."""
    return (0, content), (H - memory, H)


class StreamPlan:
    """Accumulates registers and layers while :func:`lay_out` walks the pipeline (widths may be any int-like
    terms: the prover passes symbolic D, P and V)."""

    def __init__(self, D: Any) -> None:
        """No registers or layers yet; ``D`` is a register's default width."""
        self.D, self.registers, self.layers = D, {}, []
        self._next = 0

    def reg(self, name: str, width: Any = None) -> str:
        """Register ``name`` (``width`` columns, default D) right after the last one, unless it exists."""
        if name not in self.registers:
            self.registers[name] = (self._next, self.D if width is None else width)
            self._next += self.registers[name][1]
        return name

    def mod(self, op: Module | Parallel, at: tuple[tuple, str], content: tuple[str, ...], out: str,
            prefix: str | None = None, memory: tuple[str, ...] = (), prefix_out: bool = False) -> str:
        """A module layer reading ``content`` and ``memory``, writing ``out`` (and its prefix slot)."""
        copy, tag = at
        self.layers.append(ModuleLayer(op, copy, tag, content, memory, prefix, self.reg(out), prefix_out))
        return out

    def add(self, terms: tuple[str, ...], out: str) -> str:
        """A layer writing the sum of ``terms`` to ``out``."""
        self.layers.append(Combine(terms, self.reg(out)))
        return out


def _ln(p: StreamPlan, mods: tuple, at: tuple[tuple, str], h: str, s: str, name: str) -> tuple[str, str]:
    hat = p.mod(mods[0], at, (h,), name + ".hat", s)
    return p.mod(mods[1], at, (hat,), name + ".y", s), hat


def _forward_layer(p: StreamPlan, b: ForwardBlock, copy: tuple, i: int, h: str, out: str) -> None:
    """The registers and layers of ``pipeline.forward_layer`` for auxiliary layer ``i``."""
    s = lambda name: f"{i}.{name}"  # noqa: E731
    at = lambda tag: (copy, tag)  # noqa: E731
    a, _ = _ln(p, b.ln1, at("LNFwd"), h, s("ln1"), f"L{i}.ln1")
    q, k, v = (p.mod(b.qkv, at("AttnFwd"), (a,), f"L{i}.{x}", s(x)) for x in ("q", "k", "v"))
    o = p.mod(b.softmax, at("AttnFwd"), (q, k, v), f"L{i}.attn")
    h1 = p.add((h, p.mod(b.o, at("LinFwd"), (o,), f"L{i}.o", s("o"))), f"L{i}.h1")
    m, _ = _ln(p, b.ln2, at("LNFwd"), h1, s("ln2"), f"L{i}.ln2")
    ys = []
    for k_ in range(N_SUB):
        u = p.mod(b.fc, at("LinFwd"), (m,), f"L{i}.u{k_}", s(f"fc{k_}"))
        g = p.mod(b.act, at("ActFwd"), (u,), f"L{i}.g{k_}", s(f"act{k_}"))
        ys.append(p.mod(b.proj, at("LinFwd"), (g,), f"L{i}.y{k_}", s(f"proj{k_}")))
    p.add((*ys, h1), out)


def _backward_layer(p: StreamPlan, b: BackwardBlock, copy: tuple, i: int, dh: str) -> str:
    """The registers and layers of ``pipeline.backward_layer`` for auxiliary layer ``i``."""
    s = lambda name: f"{i}.{name}"  # noqa: E731
    lin, ln, attn = (copy, "LinBwdDesc"), (copy, "LNBwdDesc"), (copy, "AttnBwdDesc")
    dms = []
    for k in range(N_SUB):
        dg = p.mod(b.proj, lin, (dh,), "d.g", s(f"proj{k}"), (f"L{i}.g{k}",), prefix_out=True)
        du = p.mod(b.act, (copy, "ActBwd"), (dg,), "d.u", s(f"act{k}"), (f"L{i}.u{k}",))
        dms.append(p.mod(b.fc, lin, (du,), f"d.m{k}", s(f"fc{k}"), (f"L{i}.ln2.y",), prefix_out=True))
    dm = p.add(tuple(dms), "d.m")
    ln2_mem = (f"L{i}.ln2.hat", f"L{i}.h1")
    dhat = p.mod(b.ln2[0], ln, (dm,), "d.hat", s("ln2"), ln2_mem, prefix_out=True)
    dh1 = p.add((dh, p.mod(b.ln2[1], ln, (dhat,), "d.x", s("ln2"), ln2_mem)), "d.h1")
    do = p.mod(b.o, lin, (dh1,), "d.o", s("o"), (f"L{i}.attn",), prefix_out=True)
    dv = p.mod(b.attn, attn, (do,), "d.v", None, (f"L{i}.q", f"L{i}.k", f"L{i}.ln1.y"))
    da = p.mod(b.v, attn, (dv,), "d.a", s("v"), (f"L{i}.ln1.y",), prefix_out=True)
    ln1_mem = (f"L{i}.ln1.hat", f"h{i}")
    dahat = p.mod(b.ln1[0], ln, (da,), "d.hat", s("ln1"), ln1_mem, prefix_out=True)
    return p.add((dh1, p.mod(b.ln1[1], ln, (dahat,), "d.x", s("ln1"), ln1_mem)), "d.h")


def _grad_block(ar: Arith, geo: Geometry) -> GradBlock:
    return GradBlock((ln_normalise(ar, geo), linear_forward(ar, geo)),
                     (linear_backward_descent(ar, geo, weights=False), ln_fd_backward(ar, geo)))


def lay_out(p: StreamPlan, fwd: Any, bwd: Any, grad: Any, shape: StreamShape, positions: Any, vocab: Any
            ) -> StreamPlan:
    """The stream's registers and the layers, in order (tint.sgd_step): the inputs, the forward pass, then per
    SGD step the loss gradient, the backward-and-descent pass over the simulated layers and their forward
    pass with the updated prefixes, and the final logits. ``positions`` is the one-hot width P, ``vocab`` V."""
    for name, width in zip(INPUT_REGISTERS, (positions, 1, vocab, 1, None)):
        p.reg(name, width)
    for i in range(shape.layers):
        _forward_layer(p, fwd, ("fwd", i), i, f"h{i}", p.reg(f"h{i + 1}"))
    last = f"h{shape.layers}"
    for step in range(shape.steps):
        final, lnf_hat = _ln(p, grad.ln, G, last, "lnf", "lnf")
        if step == 0:
            p.layers.append(Readout(final, p.reg("logits_first", vocab), grad=False))
        p.layers.append(Readout(final, p.reg("d.final"), grad=True))
        dhat = p.mod(grad.back[0], G, ("d.final",), "d.hat", "lnf", (lnf_hat, last), prefix_out=True)
        dh = p.mod(grad.back[1], G, (dhat,), "d.h", "lnf", (lnf_hat, last))
        bcopy = 0 if shape.reuse_backward else step
        for i in reversed(range(shape.start, shape.layers)):
            dh = _backward_layer(p, bwd, ("bwd", bcopy, i), i, dh)
        for i in range(shape.start, shape.layers):
            copy = ("fwd", i) if shape.reuse_forward else ("final", step, i)
            _forward_layer(p, fwd, copy, i, f"h{i}", f"h{i + 1}")
    final, _ = _ln(p, grad.ln, G, last, "lnf", "lnf")
    p.layers.append(Readout(final, p.reg("logits", vocab), grad=False))
    return p


def build_tint(aux: AuxConfig, cfg: TinTConfig, ar: Arith, fd_scale: int = 1000, gate_scale: float | None = None,
               convention: str | Convention = "paper", wte: np.ndarray | None = None,
               wpe: np.ndarray | None = None) -> Network:
    """TinT for ``aux`` as one network (tint.sgd_step): forward, loss gradient, ``steps`` x (backward +
    descent, forward with the updated prefixes), every layer with fixed weights over one stream.

    ``convention`` = "authors" builds the authors' code's choices (docs/tint_reconciliation.md): each
    sub-MLP's output-bias share takes the full step eta, the attention backward keeps a_{t,j} only for
    t = j or t in the training part. ``wte``/``wpe`` are the auxiliary embeddings (tied with the
    read-out); without them all-one arrays of the configured shapes stand in (counting only: every
    embedding entry taken non-zero).
    """
    check(aux, cfg)
    conv = Convention.named(convention)
    geo = Geometry.of(aux, cfg, fd_scale, gate_scale)
    start = aux.layers - cfg.simulated(aux)
    fwd = forward_block(ar, geo)
    bwd = backward_block(ar, geo, bias_step=geo.eta if conv.bias_full_step else None,
                         attn_post_mask="lin" if conv.attn_mask else None)
    grad = _grad_block(ar, geo)
    shape = StreamShape(aux.layers, cfg.steps, start, cfg.reuse_forward, cfg.reuse_backward)
    p = lay_out(StreamPlan(aux.D), fwd, bwd, grad, shape, geo.P, aux.vocab)
    sets = [f"{i}.{name}" for i in range(aux.layers) for name in _sets_of_layer()] + ["lnf"]
    kinds = {s: s.split(".", 1)[-1] for s in sets}
    ones = lambda *shape: ar.array(np.ones(shape, dtype=np.int8))  # noqa: E731  (opt-125m's is 50272 x 768)
    return Network(aux, cfg, geo, ar, p.layers, sets, p.registers,
                   ones(aux.vocab, aux.D) if wte is None else wte,
                   ones(aux.pos_rows, aux.D) if wpe is None else wpe, conv, kinds)


# ------------------------------------------------------------------------------------------ forward
def _context(net: Network, x: np.ndarray) -> Context:
    """Positions and the masks of Def 2.3, read off the stream's position and prefix-mask columns."""
    return context_of(net, x[:, net.reg("pos")], x[:, net.reg("train")][:, 0])


def context_of(net: Network, pos: np.ndarray, train: np.ndarray) -> Context:
    """Positions and the masks of Def 2.3 from the stream's position columns ``pos`` (rows, P) and its
    training-token column ``train`` (rows,)."""
    ar, geo = net.ar, net.geo
    zero = ar.scalar(0)
    is_token = np.array([bool(np.any(r[:geo.T] != zero)) for r in pos])
    is_train = np.array([v != zero for v in train])
    N = len(train)
    tril = np.tril(np.ones((N, N), dtype=bool))
    masks = {"lin": tril | is_train[None, :], "desc": np.broadcast_to(is_train[None, :], (N, N)).copy(),
             "aux": tril & is_token[:, None] & is_token[None, :]}
    return Context(pos, masks)


def _columns(net: Network, names: tuple[str, ...]) -> np.ndarray:
    return np.concatenate([np.arange(net.reg(r).start, net.reg(r).stop) for r in names] or [np.zeros(0, dtype=int)])


def _apply(net: Network, lay: ModuleLayer, x: np.ndarray, ctx: Context) -> None:
    ar, geo = net.ar, net.geo
    K = geo.K
    local = ar.zeros((x.shape[0], geo.H))
    if lay.prefix is not None:
        local[:K] = x[:K, net.slot(lay.prefix)]
    content, memory = (_columns(net, names) for names in (lay.content, lay.memory))
    (c0, c1), (m0, m1) = frame(geo.H, len(content), len(memory))
    if lay.content:
        local[K:, c0:c1] = x[K:][:, content]
    if lay.memory:
        local[K:, m0:m1] = x[K:][:, memory]
    out = lay.op(ar, local, ctx)
    x[K:, net.reg(lay.out)] = out[K:, :geo.D]
    if lay.prefix_out:
        x[:K, net.slot(lay.prefix)] = out[:K]


def forward(net: Network, x0: np.ndarray, softmax_eps: Any = None) -> np.ndarray:
    """Run every layer on the stream ``x0`` (one call; the result is the final stream).

    ``softmax_eps`` simulates every linear head by softmax attention (tint.thm_2_5)."""
    K = net.geo.K
    x = x0.copy()
    ctx = _context(net, x)
    ctx.softmax_eps = softmax_eps
    for lay in net.layers:
        if isinstance(lay, ModuleLayer):
            _apply(net, lay, x, ctx)
        elif isinstance(lay, Combine):
            acc = x[K:, net.reg(lay.terms[0])]
            for t in lay.terms[1:]:
                acc = acc + x[K:, net.reg(t)]
            x[K:, net.reg(lay.out)] = acc
        else:
            read_out(net, lay, x)
    return x


def read_out(net: Network, lay: Readout, x: np.ndarray) -> None:
    """The tied read-out layer on the stream ``x`` (in place): logits, or the loss gradient (tint.loss_gradient)."""
    K = net.geo.K
    logits = x[K:, net.reg(lay.src)] @ net.wte.T
    if lay.grad:
        p = am.softmax_rows(net.ar, logits, np.ones(logits.shape, dtype=bool))
        logits = ((p - x[K:, net.reg("target")]) * x[K:, net.reg("loss_mask")]) @ net.wte
    x[K:, net.reg(lay.out)] = logits
