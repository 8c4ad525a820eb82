"""How a pass of the probes (:func:`attnsim.verify.probes.probe_pass`) is shown: lines for ``attnsim teeth``
and a markdown section for the report, both from the same pass."""

from __future__ import annotations

from typing import Any

from attnsim.verify.probes import SUBJECTS


def counts(pass_: dict[str, Any]) -> str:
    """One line of figures: probes holding, twins caught, per subject."""
    parts = []
    for subject in SUBJECTS:
        ps = [p for p in pass_["probes"] if p["subject"] == subject]
        ts = [t for t in pass_["twins"] if t["subject"] == subject]
        parts.append(f"{subject}: {sum(p['ok'] for p in ps)}/{len(ps)} probes hold, "
                     f"{sum(t['caught'] for t in ts)}/{len(ts)} of their broken variants caught")
    return "; ".join(parts)


def text_lines(pass_: dict[str, Any]) -> list[str]:
    """Plain lines for a terminal: every probe and probe twin with its verdict, failures first marked FAIL."""
    lines = []
    for subject in SUBJECTS:
        good = all(p["ok"] for p in pass_["probes"] if p["subject"] == subject) and all(
            t["caught"] for t in pass_["twins"] if t["subject"] == subject)
        lines.append(f"{'ok' if good else 'FAIL'} {subject} probes (what every verdict rests on):")
        for p in pass_["probes"]:
            if p["subject"] == subject:
                lines.append(f"    {'holds' if p['ok'] else 'FAILS'} {p['name']}: {p['what']}"
                             + ("" if p["ok"] else f"\n        reason: {p['reason'][:300]}"))
        for t in pass_["twins"]:
            if t["subject"] == subject:
                caught = f"caught by {', '.join(t['failed'])}" if t["caught"] else f"reason: {t['reason'][:300]}"
                lines.append(f"    {'caught' if t['caught'] else 'NOT CAUGHT'} {t['name']} (a broken variant): "
                             f"{t['what']}\n        {caught}")
    lines.append(f"probes: {counts(pass_)}"
                 + (f"; failing: {', '.join(pass_['failing'])}" if pass_["failing"] else "")
                 + (f"; not caught: {', '.join(pass_['not_caught'])}" if pass_["not_caught"] else ""))
    return lines


def markdown(pass_: dict[str, Any]) -> list[str]:
    """The report's section: a table of the probes and one of their broken variants, with verdicts."""
    def cell(text: str) -> str:
        return text.replace("|", "/").replace("\n", " ")

    md = ["### Referee and theory probes", "",
          "The oracle's limits on every executor, the exact comparator, the ledger and the containment routine "
          "carry every verdict above, so they are probed on their own (`attnsim teeth`): "
          f"{counts(pass_)}.", "",
          "| probe | subject | question | verdict |", "|---|---|---|---|"]
    md += [f"| `{p['name']}` | {p['subject']} | {cell(p['what'])} | "
           f"{'holds' if p['ok'] else '**fails**: ' + cell(p['reason'][:200])} |" for p in pass_["probes"]]
    md += ["", "| broken variant | subject | what it breaks | verdict |", "|---|---|---|---|"]
    for t in pass_["twins"]:
        by = ", ".join(f"`{n}`" for n in t["failed"])
        verdict = f"caught by {by}" if t["caught"] else f"**not caught**: {cell(t['reason'][:200])}"
        md.append(f"| `{t['name']}` | {t['subject']} | {cell(t['what'])} | {verdict} |")
    return md + [""]
