"""Report material for MPC simulating ANNA/EMA in small memory (anna.thm_4_2, anna.thm_c_1, the sort of
anna.lemma_c_2) and for induction heads / k-hop as ANNA-transformers (anna.thm_5_4, anna.thm_5_6 by the
paper's route; anna.thm_5_4_direct, anna.thm_5_6_direct, our direct construction).

For every (L, eps') of the sweep: rounds, machines and the largest load against s, each beside our
exact formula and the paper's bound, and a log-log plot of machines against N with fitted
exponents. It reads only check records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnsim.verify.report.sections.anna import _fmt, _loglog_plot
from attnsim.verify.stats import fitted_exponent

_MPC = ("anna.thm_4_2", "anna.thm_c_1", "anna.lemma_c_2")
_KEY = {"anna.thm_4_2": "LSH codes", "anna.thm_c_1": "exact code", "anna.lemma_c_2": "sort only"}


def _group(records: list[dict[str, Any]], claim: str) -> dict[tuple, list[dict[str, Any]]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in records:
        if r["claim"] == claim and r.get("counts"):
            p = r["params"]
            key = (p.get("layers", "—"), p.get("eps1"), p.get("lsh", _KEY[claim]))
            groups.setdefault(key, []).append(r)
    return {k: sorted(v, key=lambda r: r["params"]["N"]) for k, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}


def _mpc_table(claim: str, groups: dict[tuple, list[dict[str, Any]]]) -> list[str]:
    md = [f"#### `{claim}`: rounds, machines and load against the bounds", "",
          "| L | eps' | hash | N | s | rounds | exact | bound | machines | exact | bound | max load | agrees "
          "| verdict |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (L, eps1, lsh), rs in groups.items():
        for r in rs:
            c, p, b = r["counts"], r["predicted"], r["bounds"]
            md.append(f"| {L} | {eps1} | {lsh} | {r['params']['N']} | {r['extra'].get('s')} | {c.get('rounds')} | "
                      f"{_fmt(p.get('rounds'))} | {_fmt(b.get('rounds', {}).get('value'))} | {c.get('machines')} | "
                      f"{_fmt(p.get('machines'))} | {_fmt(b.get('machines', {}).get('value'))} | "
                      f"{c.get('max_load')} / {r['extra'].get('s')} | {'yes' if r['agree'] else 'NO'} | "
                      f"{r['verdict']} |")
    return md + [""]


def _machine_plot(claim: str, groups: dict[tuple, list[dict[str, Any]]], out_dir: Path) -> list[str]:
    series, fits = {}, []
    for (L, eps1, lsh), rs in groups.items():
        Ns = [r["params"]["N"] for r in rs]
        if len(set(Ns)) < 2:
            continue
        ms = [r["counts"]["machines"] for r in rs]
        bound = [r["bounds"].get("machines", {}).get("value") for r in rs]
        series[f"L={L}, eps'={eps1}"] = (Ns, ms)
        fits.append(f"- L = {L}, eps' = {eps1} ({lsh}): machines fit N^{_fmt(fitted_exponent(Ns, ms))}, "
                    f"the paper's bound N^{_fmt(fitted_exponent(Ns, bound) if all(bound) else None)}")
    if not series:
        return []
    fname = f"anna_small_{claim.split('.')[1]}_machines.png"
    _loglog_plot(out_dir / "plots" / fname, f"{claim}: machines", dict(list(series.items())[:3]), "N", "machines")
    return [f"![machines vs N](plots/{fname})", "", *fits, ""]


def _hop_table(records: list[dict[str, Any]]) -> list[str]:
    hops = ("anna.thm_5_4", "anna.thm_5_6", "anna.thm_5_4_direct", "anna.thm_5_6_direct")
    rs = [r for r in records if r["claim"] in hops and r.get("counts")]
    if not rs:
        return []
    md = ["#### Induction heads and k-hop as ANNA-transformers: layers against the bounds", "",
          "| claim | N | k | trie fan F | layers | exact | bound | heads | bound | answers exact | verdict |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rs, key=lambda r: (r["claim"], r["params"]["N"], r["params"].get("k", 1))):
        c, p, b = r["counts"], r["predicted"], r["bounds"]
        md.append(f"| `{r['claim']}` | {r['params']['N']} | {r['params'].get('k', 1)} | {r['extra'].get('fan', '—')} | "
                  f"{c.get('layers')} | {_fmt(p.get('layers'))} | {_fmt(b.get('layers', {}).get('value'))} | "
                  f"{c.get('heads')} | {_fmt(b.get('heads', {}).get('value'))} | {'yes' if r['agree'] else 'NO'} | "
                  f"{r['verdict']} |")
    return md + [""]


def anna_small_memory_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """Markdown: the small-memory MPC tables and machine plots, then the induction-head layer table."""
    out_dir = Path(out_dir)
    md = ["### ANNA in small memory (Thm 4.2 = C.3, Thm C.1) and the tasks as ANNA-transformers (Thm 5.4, 5.6)", "",
          "Every machine's load is read off the MPC ledger and held against s; rounds and machines equal our exact "
          "formulas (paper_refs) and are held against the paper's bounds (docs/anna_small_memory.md states the "
          "reconstruction).", ""]
    for claim in _MPC:
        groups = _group(records, claim)
        if groups:
            md += _mpc_table(claim, groups) + _machine_plot(claim, groups, out_dir)
    md += _hop_table(records)
    return "\n".join(md)
