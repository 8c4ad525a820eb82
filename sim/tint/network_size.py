"""Parameters of a built TinT network, counted from its weight arrays (tint.size, Table 3).

Nothing here evaluates a size formula: every figure is read off arrays that exist.

* **modules**: each TinT module layer's arrays (attention maps, positional projections, output mixers,
  MLP maps, gates), once per copy the configuration instantiates (per auxiliary layer and per SGD step
  as the reuse flags say), as the authors' code instantiates them (§2.8);
* **prefix**: the prefix embeddings, i.e. the stream's prefix area (K rows x one H-wide slot per set);
  ``Prefix`` for the 18 sets of every auxiliary layer, ln_f's set inside ``Grad`` as the size table has it;
* **embeddings**: the auxiliary token and position tables (tied with the read-out E);
* **glue**, outside the size table: the fixed 0/1 routing between registers and module inputs and the
  residual additions, which the authors' code does in Python (their entries, not parameters).

``shared`` counts each distinct module once: every module's weights are a fixed function of the
configuration (§2.8), so one copy per module type serves every auxiliary layer and step.
Non-zeros: the module arrays as built; prefix sets and embeddings with every auxiliary weight taken
non-zero (the structural pattern: LN's diag(gamma), the bias in prefix 0, the all-zero activation sets).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from attnsim.sim.tint.builder import N_SUB
from attnsim.sim.tint.layers import Parallel
from attnsim.sim.tint.modules import diag_matrix, pack
from attnsim.sim.tint.network import Combine, ModuleLayer, Network


def arrays(obj: Any) -> Iterator[np.ndarray]:
    """Every weight array (and scalar weight, as a 1-entry array) held by a module, depth first; a field
    marked ``metadata={"param": False}`` is a constant of the configuration, not a weight."""
    if isinstance(obj, np.ndarray):
        yield obj
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            if f.metadata.get("param", True):
                yield from arrays(getattr(obj, f.name))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from arrays(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from arrays(v)
    elif not isinstance(obj, (bool, int, str, type(None))):
        yield np.array([obj], dtype=object)   # a scalar weight (a gate's offset)


def _nonzero(a: np.ndarray) -> int:
    return int(np.count_nonzero(a != 0)) if a.dtype == object else int(np.count_nonzero(a))


def entries(obj: Any) -> tuple[int, int]:
    """(all entries, non-zero entries) of the arrays of ``obj``."""
    total = nz = 0
    for a in arrays(obj):
        total += int(a.size)
        nz += _nonzero(a)
    return total, nz


@dataclass
class NetworkSize:
    """Parameter counts of one built network, by size-table tag and in total."""

    by_tag: dict[str, int]
    nonzero_by_tag: dict[str, int]
    shared_modules: int          # each distinct module once
    shared_modules_nonzero: int
    glue: dict[str, int]
    lnf_set: int                 # ln_f's prefix set, inside "Grad" (not a module)

    @property
    def total(self) -> int:
        """Every parameter the configuration instantiates (the size table's total)."""
        return sum(self.by_tag.values())

    @property
    def nonzero(self) -> int:
        """The non-zero ones among them."""
        return sum(self.nonzero_by_tag.values())

    @property
    def shared_total(self) -> int:
        """Modules counted once each, plus the prefix embeddings and the embedding tables."""
        return self.shared_modules + self.total - self.modules_total

    @property
    def modules_total(self) -> int:
        """Module parameters (every copy)."""
        return sum(v for k, v in self.by_tag.items() if k not in ("Prefix", "Emb")) - self.lnf_set

    def summary(self) -> dict[str, Any]:
        """The figures a record shows."""
        return {"total": self.total, "nonzero": self.nonzero, "zero_fraction": 1 - self.nonzero / self.total,
                "shared_total": self.shared_total, "modules_all_copies": self.modules_total,
                "modules_shared": self.shared_modules, "modules_shared_nonzero": self.shared_modules_nonzero,
                "glue_outside_table_3": self.glue}


def _split(lay: ModuleLayer) -> list[tuple[str, Any]]:
    """(tag, part): a linear backward || descent counts as LinBwd + LinDesc, as the size table has it."""
    if lay.tag == "LinBwdDesc" and isinstance(lay.op, Parallel):
        return [("LinBwd", lay.op.branches[0]), ("LinDesc", lay.op.branches[1])]
    return [(lay.tag, lay.op)]


def _prefix_pattern(net: Network) -> dict[str, tuple[int, int]]:
    """(entries, structural non-zeros) of one prefix set of each kind, packed from all-one weights."""
    ar, geo, D = net.ar, net.geo, net.aux.D
    ones = lambda *s: ar.array(np.ones(s, dtype=int))  # noqa: E731
    full = pack(ar, geo, ones(D, D), ones(D))
    diag = pack(ar, geo, diag_matrix(ar, ones(D)), ones(D))
    zero = ar.zeros((geo.K, geo.H))
    out = {}
    for kind in {**{k: None for k in ("ln1", "ln2", "lnf", "q", "k", "v", "o")},
                 **{f"{x}{k}": None for x in ("fc", "act", "proj") for k in range(N_SUB)}}:
        rows = diag if kind.startswith("ln") else zero if kind.startswith("act") else full
        out[kind] = (int(rows.size), _nonzero(rows))
    return out


def count(net: Network) -> NetworkSize:
    """Count the network's parameters from its arrays (see the module docstring)."""
    by_tag: Counter[str] = Counter()
    nz_by_tag: Counter[str] = Counter()
    seen_copies: set[tuple[int, tuple]] = set()
    seen_ops: set[int] = set()
    shared = shared_nz = routed = 0
    combine = 0
    counted: dict[int, tuple[int, int]] = {}  # by id: a module object's arrays are read once, however many copies

    def entries_of(part: Any) -> tuple[int, int]:
        if id(part) not in counted:
            counted[id(part)] = entries(part)
        return counted[id(part)]

    for lay in net.layers:
        if isinstance(lay, Combine):
            combine += len(lay.terms) * net.registers[lay.out][1]
            continue
        if not isinstance(lay, ModuleLayer):
            continue
        routed += sum(net.registers[r][1] for r in (*lay.content, *lay.memory, lay.out))
        routed += net.geo.K * net.geo.H * ((lay.prefix is not None) + lay.prefix_out)
        if (id(lay.op), lay.copy) not in seen_copies:
            seen_copies.add((id(lay.op), lay.copy))
            for tag, part in _split(lay):
                n, nz = entries_of(part)
                by_tag[tag] += n
                nz_by_tag[tag] += nz
        if id(lay.op) not in seen_ops:
            seen_ops.add(id(lay.op))
            n, nz = entries_of(lay.op)
            shared, shared_nz = shared + n, shared_nz + nz
    pattern = _prefix_pattern(net)
    lnf = 0
    for s in net.sets:
        n, nz = pattern[net.set_kinds[s]]
        tag = "Grad" if s == "lnf" else "Prefix"
        lnf += n if s == "lnf" else 0
        by_tag[tag] += n
        nz_by_tag[tag] += nz
    for table in (net.wte, net.wpe):
        by_tag["Emb"] += int(table.size)
        nz_by_tag["Emb"] += _nonzero(table)
    return NetworkSize(dict(by_tag), dict(nz_by_tag), shared, shared_nz,
                       {"routing_entries": routed, "residual_sum_entries": combine}, lnf)


def width_split(net: Network) -> dict[str, int]:
    """The stream's columns by what they hold (every figure read off the built network's layout): the prefix
    area (one slot of the module width D_sim per prefix set), positions and the prefix mask, targets and the
    loss mask, the logits, the hidden state after each auxiliary layer, the activations the forward pass
    writes for later layers to read (the authors' "memories" and every module output), and the gradients."""
    groups = {"positions_and_prefix_mask": 0, "targets_and_loss_mask": 0, "logits": 0, "hidden_states": 0,
              "carried_activations": 0, "gradients": 0}
    for name, (_, width) in net.registers.items():
        group = ("positions_and_prefix_mask" if name in ("pos", "train") else
                 "targets_and_loss_mask" if name in ("target", "loss_mask") else
                 "logits" if name.startswith("logits") else
                 "gradients" if name.startswith("d.") else
                 "hidden_states" if name[0] == "h" and name[1:].isdigit() else "carried_activations")
        groups[group] += width
    return {"stream_width": net.width, "D_sim": net.geo.H, "prefix_area": net.prefix_width,
            "prefix_sets": len(net.sets), **groups}
