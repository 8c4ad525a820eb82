"""The report's section on ANNA simulating MPC (anna.thm_4_1, anna.thm_4_4, Lemma B.4).

A table of layers, heads and width against N for each protocol, beside the paper's bounds at the
same N, and a log-log plot of the width against N with N^eps' and N itself, so the sublinear width
is visible. It reads only check records (``attnsim.verify.check``); reconstructions are stated in
docs/anna_mpc_to_anna.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnsim.verify.report.plots import figure, save
from attnsim.verify.stats import fitted_exponent

MPC_CLAIMS = ("anna.thm_4_1", "anna.thm_b_10", "anna.cor_b_14")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "—" if v is None else str(v)


def _bound(r: dict[str, Any], name: str) -> Any:
    return r.get("bounds", {}).get(name, {}).get("value")


def _plot(path: Path, series: dict[str, tuple[list[float], list[float], str]], title: str, ylabel: str) -> None:
    fig, (ax,) = figure(width=6, height=4.2)
    for name, (xs, ys, style) in series.items():
        ax.loglog(xs, ys, style, label=name)
    ax.set(title=title, xlabel="N", ylabel=ylabel)
    ax.legend(fontsize=7)
    save(fig, path, dpi=110)


def _mpc_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of the first of Thm 4.1 / B.10 / B.14 that has any (they run the same checker)."""
    for claim in MPC_CLAIMS:
        rows = [r for r in records if r["claim"] == claim and r.get("counts", {}).get("layers")]
        if rows:
            return sorted(rows, key=lambda r: (r["extra"].get("protocol", ""), r["params"]["N"]))
    return []


def _table(rows: list[dict[str, Any]]) -> list[str]:
    md = ["| protocol | N | P | s | eps | eps' | R | D | layers = R D^2 + 2 | heads | N^((eps'-eps)/4) | width | "
          "N^eps' | width / N^eps' | width / N | verdict |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        e, c, N = r["extra"], r["counts"], r["params"]["N"]
        md.append(f"| {e.get('protocol', 'lowrank')} | {N} | {e['P']} | {e['s']} | {_fmt(e['eps'])} | "
                  f"{_fmt(r['params']['eps1'])} | {e['R']} | {e['D']} | {c['layers']} | {c['heads']} | "
                  f"{_fmt(_bound(r, 'heads'))} | {c['embedding_dim']} | {_fmt(_bound(r, 'embedding_dim'))} | "
                  f"{_fmt(c['embedding_dim'] / _bound(r, 'embedding_dim'))} | {_fmt(c['embedding_dim'] / N)} | "
                  f"{r['verdict']} |")
    return md


def _width_plot(rows: list[dict[str, Any]], out_dir: Path) -> list[str]:
    by_protocol: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_protocol.setdefault(r["extra"].get("protocol", "lowrank"), []).append(r)
    series: dict[str, tuple[list[float], list[float], str]] = {}
    fits = []
    for (name, rs), style in zip(sorted(by_protocol.items()), ("o-", "s-", "^-", "d-")):
        rs = sorted({r["params"]["N"]: r for r in rs}.values(), key=lambda r: r["params"]["N"])
        if len(rs) < 2:
            continue
        Ns = [r["params"]["N"] for r in rs]
        widths = [r["counts"]["embedding_dim"] for r in rs]
        series[f"width, {name}"] = (Ns, widths, style)
        s_fit = fitted_exponent(Ns, [r["extra"]["s"] for r in rs])
        fits.append(f"{name}: **{_fmt(fitted_exponent(Ns, widths))}** (s grows as N^{_fmt(s_fit)})")
    if not series:
        return []
    Ns = sorted({r["params"]["N"] for r in rows})
    eps1 = rows[0]["params"]["eps1"]
    series[f"N^eps' (eps' = {eps1})"] = (Ns, [n ** eps1 for n in Ns], "k--")
    series["N (linear)"] = (Ns, [float(n) for n in Ns], "k:")
    name = "anna_mpc_to_anna_width.png"
    _plot(out_dir / "plots" / name, series, "Thm 4.1: embedding dimension against N", "embedding dimension")
    return [f"![width vs N](plots/{name})", "",
            "Fitted exponent of the width in N: " + "; ".join(fits) + ". The width is Lemma B.4's code for bundles "
            "of at most s + 2 k D words (the relay's proved capacity), so it follows s = N^eps: sublinear, below the "
            "N line's slope 1.", ""]


def _lowrank_table(records: list[dict[str, Any]]) -> list[str]:
    rows = sorted((r for r in records
                   if r["claim"] in ("anna.thm_4_4", "anna.cor_d_3") and r.get("counts", {}).get("layers")),
                  key=lambda r: (r["params"]["depth"], r["params"]["N"]))
    if not rows:
        return []
    md = ["", "#### Thm 4.4 (Cor D.3): an L-layer low-rank model through Lemma D.2's protocol", "",
          "| N | L | R | D | layers | Cor D.3 depth bound (constant 1) | heads | width | outputs equal | verdict |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        e, c = r["extra"], r["counts"]
        same = "yes" if r["agree"] else "NO"
        md.append(f"| {r['params']['N']} | {r['params']['depth']} | {e['R']} | {e['D']} | {c['layers']} | "
                  f"{_fmt(_bound(r, 'layers'))} | {c['heads']} | {c['embedding_dim']} | {same} | {r['verdict']} |")
    return md


def _code_table(records: list[dict[str, Any]]) -> list[str]:
    rows = sorted((r for r in records if r["claim"] == "anna.lemma_b_4" and r.get("counts")),
                  key=lambda r: r["params"]["alpha"])
    if not rows:
        return []
    md = ["", "#### Lemma B.4: the sparse averaging code", "",
          "| q | alpha | Delta | base B | rows T | dimension | alpha^4 Delta log q | failures (<= alpha) | "
          "wrong decodes | refused (alpha + 2) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, e, c = r["params"], r["extra"], r["counts"]
        md.append(f"| {p['q']} | {p['alpha']} | {p['Delta']} | {e['base']} | {e['rows']} | {c['dimension']} | "
                  f"{_fmt(_bound(r, 'dimension'))} | {c['decoding_failures']} | {c['wrong_decodes']} | "
                  f"{e['over_alpha_detected']} of {e['trials']} |")
    return md


def anna_mpc_to_anna_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """Markdown for Thm 4.1 / 4.4 and Lemma B.4; writes ``out_dir/plots/anna_mpc_to_anna_width.png``."""
    out_dir = Path(out_dir)
    rows = _mpc_rows(records)
    md = ["### ANNA simulates MPC (Thm 4.1 = Thm B.10 / Cor B.14)", "",
          "Each protocol runs on the referee MPC machine directly and inside the EMA transformer (input layer, "
          "D relay layers per round, output layer); outputs are compared exactly. Bounds are the paper's with "
          "constant 1; reconstructions are listed in docs/anna_mpc_to_anna.md.", ""]
    if rows:
        md += _table(rows) + [""] + _width_plot(rows, out_dir)
    md += _lowrank_table(records) + _code_table(records)
    return "\n".join(md)
