"""The ANNA section of ``attnsim report``: counts against bounds, eta with its interval, k-hop rounds,
and a log-log plot of hash evaluations (anna.alg_1) against N with its fitted exponent beside the
paper's (MPC in small memory has its own section,
:mod:`attnsim.verify.report.sections.anna_small_memory`). It reads only check records (attnsim.verify.check).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attnsim.verify.anna_eta import eta_sweep
from attnsim.verify.stats import fitted_exponent


def _loglog_plot(
    path: Any, title: str, series: dict[str, tuple[list[float], list[float]]], xlabel: str, ylabel: str
) -> None:
    from attnsim.verify.report.plots import figure, legend, log_axes, save

    fig, (ax,) = figure(width=5.4, height=3.8)
    for (name, (xs, ys)), style in zip(series.items(), ("o-", "s--", "^:")):
        ax.plot(xs, ys, style, label=name)
    log_axes(ax)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    legend(ax)
    save(fig, path)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "—" if v is None else str(v)


def _scaling(records: list[dict], out_dir: Any, claim: str, resource: str, label: str, predicted: str) -> list[str]:
    """A log-log plot of a count against N: measured, our exact formula and the paper's bound."""
    rs = sorted(
        (r for r in records if r["claim"] == claim and resource in r.get("counts", {})), key=lambda r: r["params"]["N"]
    )
    if len(rs) < 2:
        return []
    Ns = [r["params"]["N"] for r in rs]
    measured = [r["counts"][resource] for r in rs]
    bound = [r["bounds"].get(resource, {}).get("value") for r in rs]
    series = {"measured": (Ns, measured)}
    if all(isinstance(b, (int, float)) for b in bound):
        series["paper bound (constant 1)"] = (Ns, bound)
    fname = f"anna_{claim.split('.')[1]}_{resource}.png"
    _loglog_plot(out_dir / "plots" / fname, f"{claim}: {resource}", series, "N", label)
    fit_m, fit_b = (
        fitted_exponent(Ns, measured),
        (fitted_exponent(Ns, bound) if "paper bound (constant 1)" in series else None),
    )
    return [
        f"![{resource} vs N](plots/{fname})",
        "",
        f"Fitted exponent of {label} in N: measured **{_fmt(fit_m)}**, paper bound {_fmt(fit_b)} "
        f"(bound's leading exponent {predicted}; logarithmic factors and the proof's z, ell raise the fit at small N).",
        "",
    ]


def anna_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """Tables of measured counts against exact formulas and bounds, eta with its interval, k-hop rounds, plots."""
    out_dir = Path(out_dir)
    md = [
        "### ANNA: measured counts against the paper's bounds",
        "",
        "| claim | params | resource | measured | exact formula | bound value | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        for name in sorted(set(r.get("predicted", {})) | set(r.get("bounds", {}))):
            md.append(
                f"| `{r['claim']}` | {params} | {name} | {_fmt(r['counts'].get(name))} | "
                f"{_fmt(r['predicted'].get(name))} | {_fmt(r['bounds'].get(name, {}).get('value'))} | {r['verdict']} |"
            )
    lsh = [r for r in records if r["claim"] == "anna.alg_1" and "eta_ci95" in r.get("extra", {})]
    if lsh:
        md += [
            "",
            "#### Algorithm 1: failure probability eta over seeds",
            "",
            "| N | rho | ell | z | runs | violating runs | eta (measured) | 95% Clopper-Pearson "
            "| proof's bound | paper's N^(3rho-1) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in sorted(lsh, key=lambda r: r["params"]["N"]):
            e = r["extra"]
            md.append(
                f"| {r['params']['N']} | {_fmt(e['rho'])} | {e['ell']} | {e['z']} | {e['runs']} | "
                f"{e['violating_runs']} | "
                f"{_fmt(e['eta_hat'])} | [{_fmt(e['eta_ci95'][0])}, {_fmt(e['eta_ci95'][1])}] | "
                f"{_fmt(r['bounds'].get('eta_proof', {}).get('value'))} | "
                f"{_fmt(r['bounds'].get('eta', {}).get('value'))} |"
            )
    hops = sorted((r for r in records if r["claim"] == "anna.khop" and r.get("counts")),
                  key=lambda r: (r["params"]["N"], r["extra"]["s"], r["params"]["k"]))
    if hops:
        md += ["", "#### k-hop on the MPC machine (Thm F.4): rounds against O(1/eps) + floor(log2 k)", "",
               "| N | s | regime | machines | k | floor(log2 k) | rounds | rounds - floor(log2 k) | correct |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in hops:
            k, c = r["params"]["k"], r["counts"]
            md.append(
                f"| {r['params']['N']} | {r['extra']['s']} | {r['extra']['regime']} | {c['machines']} | {k} | "
                f"{k.bit_length() - 1} | {c['rounds']} | {c['rounds'] - (k.bit_length() - 1)} | "
                f"{'yes' if r['agree'] else 'NO'} |"
            )
    routed = sorted((r for r in records if r["claim"] == "anna.cor_b_9" and "max_alpha" in r.get("extra", {})),
                    key=lambda r: (r["extra"]["protocol"], r["params"]["N"]))
    if routed:
        md += ["", "#### Cor B.9: one ANNA layer per MPC round (Lemma B.3), Lemma B.4's code at alpha = s", "",
               "| protocol | N | P | s | heads | R | layers | width | code rows x buckets | max alpha | correct |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in routed:
            e, c = r["extra"], r["counts"]
            md.append(f"| {e['protocol']} ({e['mechanism']}) | {r['params']['N']} | {e['P']} | {e['s']} | "
                      f"{c['heads']} | {e['R']} | {c['layers']} | {c['embedding_dim']} | "
                      f"{e['code']['rows']} x {e['code']['base']} | {e['max_alpha']} | "
                      f"{'yes' if r['agree'] else 'NO'} |")
    rho = next((r["extra"].get("rho") for r in records if r["claim"] == "anna.alg_1" and r.get("extra")), None)
    md += [""] + _scaling(records, out_dir, "anna.alg_1", "hash_evaluations", "hash evaluations",
                          f"1 + 3 rho = {_fmt(1 + 3 * rho) if rho is not None else '—'}")
    md += _log_factors(records)
    return "\n".join(md)


def _log_factors(records: list[dict[str, Any]]) -> list[str]:
    """How much of a fitted exponent comes from the proof's ell and z rather than from N^(3 rho)."""
    lines = []
    for claim in ("anna.alg_1",):
        rs = sorted(
            (r for r in records if r["claim"] == claim and "ell" in r.get("extra", {})), key=lambda r: r["params"]["N"]
        )
        if len({r["params"]["N"] for r in rs}) < 2:
            continue
        Ns = [r["params"]["N"] for r in rs]
        ell = fitted_exponent(Ns, [r["extra"]["ell"] for r in rs])
        line = (f"- `{claim}`: the proof's ell = ceil(ln(N^2/delta)/p1^z) grows with fitted exponent {_fmt(ell)} "
                f"against 3 rho = {_fmt(3 * rs[0]['extra']['rho'])} (the rest is its logarithm)")
        lines.append(line)
    return (["Where the extra exponent comes from:", ""] + lines + [""]) if lines else []


def eta_sweep_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """eta-hat with its interval against N beside the proof's eta, from a sweep run here (verify.anna_eta);
    only in a report whose sweep ran anna.alg_1."""
    if not any(r["claim"] == "anna.alg_1" for r in records):
        return ""
    rows = eta_sweep(quick)
    out = Path(out_dir) / "tables"
    out.mkdir(parents=True, exist_ok=True)
    (out / "anna_eta_sweep.json").write_text(json.dumps(rows, indent=1))
    md = ["#### Algorithm 1: eta-hat against N (Thm 3.4 / A.1)", "",
          "The verdict of `anna.alg_1` fails when the whole 95% Clopper-Pearson interval of eta-hat lies above "
          "the proof's eta at that N (its union bound with the proof's ell(N) and z(N)). The paper's rate "
          "N^(3 rho - 1) is shown without a constant.", "",
          "| N | z | ell | runs | violating runs | eta-hat | 95% Clopper-Pearson | proof's eta | N^(3rho-1) "
          "| eta decides |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["eta_ci95"]
        md.append(f"| {r['N']} | {r['z']} | {r['ell']} | {r['runs']} | {r['violating_runs']} | {_fmt(r['eta_hat'])} | "
                  f"[{_fmt(lo)}, {_fmt(hi)}] | {_fmt(r['eta_proof'])} | {_fmt(r['eta_paper_rate'])} | "
                  f"{r['eta_decision']} |")
    return "\n".join(md + [""])
