"""``attnsim tint-size --aux NAME``: TinT's parameter count per module type and in total (tint.size).

:func:`tint_size_command` returns the table as text (the CLI prints it); :func:`size_table` is the
one-row-per-auxiliary-model table the report uses. Counts are the tint.size formulas of paper_refs
evaluated by ``attnsim.theory.tint_size``; ``verify_build=True`` also builds the TinT network (shapes and
non-zero pattern only) and prints the count of its weight arrays beside them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.cases import case
from attnsim.sim.tint.configs import LISTED, AuxConfig, TinTConfig, TinTConfigError, check, published
from attnsim.sim.tint.network import Network, build_tint
from attnsim.sim.tint.network_effective import effective_modules, effective_prefix
from attnsim.sim.tint.network_size import NetworkSize
from attnsim.sim.tint.network_size import count as count_network
from attnsim.theory import tint_size

# (module type, which copies multiply it: forward or backward blocks, instances per block)
_ROWS = (("LNFwd", "fwd", 2), ("AttnFwd", "fwd", 1), ("LinFwd", "fwd", 3), ("ActFwd", "fwd", 1),
         ("LinBwd", "bwd", 3), ("LinDesc", "bwd", 3), ("ActBwd", "bwd", 1), ("LNBwdDesc", "bwd", 2),
         ("AttnBwdDesc", "bwd", 1))


def configs(aux: str, n_sim: int = 0, steps: int = 1, reuse_forward: bool = True, reuse_backward: bool = True,
            K: int = 0, H_sim: int = 0) -> tuple[AuxConfig, TinTConfig]:
    """The published aux config with the README TinT settings, overridden where a value is given."""
    a, cfg = published(aux)
    cfg = replace(cfg, n_sim=n_sim or None, steps=steps, reuse_forward=reuse_forward, reuse_backward=reuse_backward,
                  K=K or cfg.K, H_sim=H_sim or cfg.H_sim)
    check(a, cfg)
    return a, cfg


def case_configs(name: str, n_sim: int, steps: int, rf: bool, rb: bool) -> tuple[AuxConfig, TinTConfig]:
    """The configuration of a listed auxiliary model, or of the ``tiny`` test case, with these settings."""
    if name == "tiny":
        c = case("tiny-relu")
        return c.aux, replace(c.tint, n_sim=n_sim or None, steps=steps, reuse_forward=rf, reuse_backward=rb)
    return configs(name, n_sim, steps, rf, rb)


def size_values(aux: AuxConfig, cfg: TinTConfig) -> dict[str, int]:
    """The base symbols of the tint.size formulas, read off the configuration."""
    return {"D": aux.D, "L": aux.layers, "V": aux.vocab, "T": aux.positions, "T_emb": aux.pos_rows, "K": cfg.K,
            "H_sim": cfg.H_sim, "n_sim": cfg.simulated(aux), "steps": cfg.steps, "rf": int(cfg.reuse_forward),
            "rb": int(cfg.reuse_backward)}


def _render(header: list[str], rows: list[list[str]], fmt: str) -> str:
    if fmt == "tex":
        lines = [r"\begin{tabular}{" + "l" + "r" * (len(header) - 1) + "}", r"\toprule",
                 " & ".join(header) + r" \\", r"\midrule"]
        lines += [" & ".join(r) + r" \\" for r in rows]
        return "\n".join(lines + [r"\bottomrule", r"\end{tabular}"]) + "\n"
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def _n(v: int) -> str:
    return f"{v:,}"


FORMATS = ("md", "tex", "json")


def tint_size_command(aux: str, n_sim: int = 0, steps: int = 1, reuse_forward: bool = True,
                      reuse_backward: bool = True, K: int = 0, H_sim: int = 0, fmt: str = "md",
                      verify_build: bool = False) -> str:
    """The per-module size table of TinT for one auxiliary model (``fmt``: md, tex or json)."""
    if fmt not in FORMATS:
        raise TinTConfigError(f"--format: must be one of {', '.join(FORMATS)}; got {fmt!r}")
    a, cfg = configs(aux, n_sim, steps, reuse_forward, reuse_backward, K, H_sim)
    v = size_values(a, cfg)
    per = tint_size.per_module(v)
    tags = tint_size.breakdown(v)
    copies = {"fwd": v["L"] + v["n_sim"] * v["steps"] * (1 - v["rf"]),
              "bwd": v["n_sim"] * (1 + (v["steps"] - 1) * (1 - v["rb"]))}
    rows = [[name, _n(per[name]), f"{k} x {copies[which]}", _n(tags[name])] for name, which, k in _ROWS]
    rows += [["Prefix (18 sets per layer)", _n(18 * cfg.K * cfg.width(a)), f"{a.layers}", _n(tags["Prefix"])],
             ["Grad (ln_f)", _n(tags["Grad"]), "1", _n(tags["Grad"])],
             ["Emb (token + position)", _n(tags["Emb"]), "1", _n(tags["Emb"])],
             ["**total**" if fmt == "md" else "total", "", "", _n(tags["total"])]]
    title = (f"TinT for {a.name}: D = {a.D}, L = {a.layers}, K = {cfg.K}, S = {cfg.S(a)}, D_sim = {cfg.width(a)}, "
             f"H_sim = {cfg.H_sim}, positions P = {cfg.position_dim(a)}, simulated layers = {cfg.simulated(a)}, "
             f"SGD steps = {cfg.steps}, reuse forward = {cfg.reuse_forward}, reuse backward = {cfg.reuse_backward}")
    ceiling = tint_size.ceiling()
    size = count_network(build_tint(a, cfg, get_arith("count"))) if verify_build else None
    built = size.total if size else None
    if fmt == "json":
        import json

        modules = {r[0]: {"params_per_instance": per.get(r[0]), "instances": r[2], "params": tags.get(r[0])}
                   for r in rows[:len(_ROWS)]}
        modules.update({tag: {"params": tags[tag]} for tag in ("Prefix", "Grad", "Emb")})
        return json.dumps({"aux": a.name, "config": {"D": a.D, "L": a.layers, "K": cfg.K, "S": cfg.S(a),
                                                     "D_sim": cfg.width(a), "H_sim": cfg.H_sim,
                                                     "positions": cfg.position_dim(a), "n_sim": cfg.simulated(a),
                                                     "steps": cfg.steps, "reuse_forward": cfg.reuse_forward,
                                                     "reuse_backward": cfg.reuse_backward},
                           "modules": modules, "total": tags["total"], "ceiling": ceiling,
                           "under_ceiling": tags["total"] < ceiling, "network_count": built,
                           "network_nonzero": size.nonzero if size else None}, indent=2)
    out = (title + "\n\n" if fmt == "md" else "% " + title + "\n") + _render(
        ["module type", "params per instance", "instances", "params"], rows, fmt)
    note = "\n" if fmt == "md" else "% "
    out += f"{note}total {_n(tags['total'])} parameters: {'under' if tags['total'] < ceiling else 'NOT under'} " \
           f"{ceiling / 1e9:g} billion (tint.under_2b)\n"
    if size is not None:
        same = "equals" if size.total == tags["total"] else "DIFFERS FROM"
        out += (f"{'' if fmt == 'md' else '% '}counted from the built network's arrays: {_n(size.total)} ({same} "
                f"the formula), {_n(size.nonzero)} non-zero\n")
    return out


def size_table(names: Iterable[str] = LISTED, fmt: str = "md") -> str:
    """One row per auxiliary model: configuration and totals with and without reuse (1 step, all layers)."""
    rows = []
    for name in names:
        a, cfg = configs(name)
        v = size_values(a, cfg)
        total = tint_size.count("total", v)
        no_reuse = tint_size.count("total", dict(v, rf=0, rb=0))
        rows.append([name, str(a.D), str(a.layers), str(cfg.K), str(cfg.S(a)), str(cfg.width(a)), str(cfg.H_sim),
                     _n(total), _n(no_reuse), "yes" if total < tint_size.ceiling() else "no"])
    header = ["aux", "D", "L", "K", "S", "D_sim", "H_sim", "TinT params (reuse)", "TinT params (no reuse)", "under 2B"]
    return _render(header, rows, fmt)


def three_counts(net: Network, size: NetworkSize) -> dict[str, Any]:
    """The parameter count three ways (as the authors' code and Table 3 count; distinct arrays; effective), and
    the prefix entries read off the stream's layout, which must equal the prefix sets counted."""
    stream_prefix = net.geo.K * net.prefix_width
    modules = effective_modules(net)
    effective = modules + effective_prefix(net) + size.by_tag.get("Emb", 0)
    return {"as_instantiated": size.total, "distinct_arrays": size.shared_total, "effective": effective,
            "effective_modules": modules, "prefix_from_stream": stream_prefix,
            "prefix_counted": size.by_tag.get("Prefix", 0) + size.lnf_set,
            "labels": {"as_instantiated": "every module copy the configuration instantiates (per auxiliary layer, "
                                          "per step without reuse), prefix sets and embeddings: the authors' code's "
                                          "count and Table 3's",
                       "distinct_arrays": "each module object once (their weights are fixed functions of the "
                                          "configuration, §2.8), prefix sets and embeddings",
                       "effective": "module entries on a path from a live input to a read output, found from "
                                    "structure per kind of row (prefix, training, test; each object once), "
                                    "prefix entries a module reads, embeddings"}}


def width_finding(name: str, w: dict[str, int]) -> dict[str, Any]:
    """What one forward pass costs in width, from this run's layout (for the front page's findings)."""
    ratio = w["stream_width"] / w["D_sim"]
    return {"topic": "tint.width", "value": ratio,
            "text": f"TinT for {name} in one forward pass runs on a stream {w['stream_width']:,} columns wide, "
                    f"{ratio:,.0f}x the paper's D_sim = {w['D_sim']:,}: {w['prefix_area']:,} hold the "
                    f"{w['prefix_sets']} prefix sets side by side, {w['carried_activations']:,} the activations the "
                    f"backward pass reads, {w['gradients']:,} gradients, {w['logits'] + w['targets_and_loss_mask']:,} "
                    "logits and targets; the paper's width keeps the prefix sets and activations outside"}
