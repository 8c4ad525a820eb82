"""One page, one story (verify/report/verdicts.py, front.py, scope.py) and computed findings (verify/findings):
a failing claim of a plug-in paper fails on the front page, in the checks table and in the failing list alike; the
page opens with its sweep; a folder holding another scope's report is refused unless forced."""

from __future__ import annotations

import pytest

from attnsim.paper_refs import Claim, Paper
from attnsim.verify.findings import Finding, check_command, finder, findings, record_name
from attnsim.verify.registry import UsageError
from attnsim.verify.report.front import front_page
from attnsim.verify.report.scope import claim_folder, sweep_line
from attnsim.verify.report.verdicts import claim_verdicts, failing_list, verdict_table

PLUG = Paper("plug", "A Plug-in Paper", "", (Claim("plug.prop", "plug", "Proposition 1", "proposition", "x",
                                                   implemented=True, limit="N"),))


def _rec(verdict, reasons=()):
    return {"claim": "plug.prop", "params": {"N": 8}, "numerics": "exact", "seed": 0, "verdict": verdict,
            "reasons": list(reasons), "evidence": "independent"}


@pytest.mark.parametrize("how", ["check", "growth", "teeth"])
def test_a_failing_plug_in_claim_fails_on_the_front_page_the_checks_table_and_the_failing_list(how):
    teeth = {"plug.prop": {"registered": 2, "run": 2, "caught": 2 - (how == "teeth"), "refused": 0,
                           "ok": how != "teeth", "problem": "a broken variant passed" if how == "teeth" else None}}
    records = [_rec("pass"), _rec("fail", ["output does not agree"]) if how == "check" else _rec("pass")]
    growth = [{"claim": "plug.prop", "params": {"growth": "calls"}, "numerics": None, "verdict": "fail",
               "reasons": ["calls: exceeds by the growth test"]}] if how == "growth" else []
    verdicts = claim_verdicts(records, teeth, growth)
    front = "\n".join(front_page([PLUG], records, {"plug.prop"}, verdicts, {}, {}))
    table = verdict_table(verdicts)
    failing = failing_list(verdicts)
    assert "| [Proposition 1](#plug.prop) | fail (" in front and "; 1 failing." in front
    assert table[2].startswith("| [plug.prop](#plug.prop) | `plug.prop` | 2 |") and table[2].endswith("| fail |")
    assert failing and {r["claim"] for r in failing} == {"plug.prop"} and all("source" not in r for r in failing)
    ok = claim_verdicts([_rec("pass")], {**teeth, "plug.prop": {**teeth["plug.prop"], "ok": True, "caught": 2}})
    assert "| [Proposition 1](#plug.prop) | pass |" in "\n".join(front_page([PLUG], [_rec("pass")], {"plug.prop"}, ok,
                                                                              {}, {}))
    assert verdict_table(ok)[2].endswith("| pass |") and failing_list(ok) == []
    said = "output proved for every size (z3; cvc5 confirms 3 of 5)"  # a status with the second solver's word
    proved = "\n".join(front_page([PLUG], [_rec("pass")], {"plug.prop"}, ok, {"plug.prop": said}, {}))
    assert f"| {said} |" in proved and "1 with the output proved for every size" in proved


def test_checks_outside_the_stated_range_are_counted_in_the_cell_and_all_of_them_make_it_partial():
    """A record that says it ran outside the statement's range is partial evidence even where it passes: the claim's
    cell counts such checks, and a claim with no other check is partial, not pass; a failing one still fails."""
    from attnsim.verify.report.claim_page import shown_verdict

    outside = {**_rec("pass"), "extra": {"in_stated_range": False}}
    inside = {**_rec("pass"), "extra": {"in_stated_range": True}}
    mixed = claim_verdicts([inside, outside, outside])["plug.prop"]
    assert mixed.ok and mixed.cell == "pass (2 of 3 checks outside the stated range)"
    assert claim_verdicts([outside])["plug.prop"].cell == "partial (1 of 1 checks outside the stated range)"
    assert claim_verdicts([inside, _rec("pass")])["plug.prop"].cell == "pass"
    assert claim_verdicts([outside, _rec("fail", ["x"])])["plug.prop"].cell.startswith("fail (")
    assert shown_verdict(outside) == "pass (partial: outside the stated range)" and shown_verdict(inside) == "pass"
    assert shown_verdict({**outside, "evidence": "sanity"}) == "pass (sanity, partial: outside the stated range)"


def test_the_page_opens_with_its_sweep_and_a_folder_keeps_its_scope(tmp_path):
    line = sweep_line(True, [_rec("pass"), {**_rec("pass"), "params": {"N": 64}}], 12, ["plug"], None)
    assert line.startswith("**Sweep:** quick (`attnsim report --quick`): papers plug; 2 checks at N = 8…64")
    assert "seed 0; 12 points of growth sweeps; commit " in line and "code version " in line
    claim_folder(tmp_path, ["two_heads", "anna", "tint"], None, False)
    claim_folder(tmp_path, ["anna", "tint", "two_heads"], None, False)  # the same scope: written again
    with pytest.raises(UsageError, match=r"out: .* holds a report of every paper; this one is of --paper "
                                         r"two_heads: .*--force"):
        claim_folder(tmp_path, ["two_heads"], "two_heads", False)
    claim_folder(tmp_path, ["two_heads"], "two_heads", True)


def test_findings_are_computed_by_finders_and_name_their_records_and_commands(monkeypatch):
    from attnsim.verify import findings as mod

    rec = {"claim": "two_heads.lemma_3_1", "params": {"N": 64, "M": 8, "d": 16}, "numerics": "float64", "seed": 0,
           "error_bits": 0.0}
    monkeypatch.setattr(mod, "_FINDERS", {})
    finder("two_heads")(lambda records: [Finding("two_heads", f"{len(records)} bits", "two_heads.lemma_3_1",
                                                 tuple(records))])
    monkeypatch.setattr(mod, "BUILT_IN", ())
    (f,) = findings("two_heads", [rec])
    assert f.text == "1 bits" and f.sources == [record_name(rec)]
    assert f.commands == ["attnsim check two_heads.lemma_3_1 --d 16 --numerics float64"]  # N, M: the defaults
    assert check_command({**rec, "seed": 3}).endswith("--seed 3")
    assert f.as_dict()["records"][0]["record"] == rec


def test_no_finding_text_lives_in_paper_refs():
    from pathlib import Path

    import attnsim.paper_refs as refs

    for toml in Path(refs.__file__).parent.glob("*.toml"):
        assert "findings" not in toml.read_text(), toml.name


def test_plots_draw_the_line_that_decided_on_the_bounds_own_variable_with_labels(monkeypatch, tmp_path):
    from attnsim.verify.growth import judge
    from attnsim.verify.report import claim_plots as plots

    seen = []
    monkeypatch.setattr(plots, "save", lambda fig, path, dpi=0: seen.append(fig))

    def rec(n):
        return {"claim": "anna.alg_1", "verdict": "pass", "size": {"var": "N", "value": n},
                "containment": {"memory_words": {"verdict": "tight", "leading_constant": "3"}},
                "bounds": {"memory_words": {"measured": 4.0 * n, "value": 3.0 * n, "upper": {"value": 10.0 * n}}}}
    g = judge("anna.alg_1", "memory_words", [rec(n) for n in (32, 64, 128, 256)])
    assert plots.growth_plot([g], tmp_path / "g.png")
    (ax,) = seen[0].axes
    assert ax.get_xlabel() == "N" and ax.get_ylabel() == "memory_words"
    labels = ax.get_legend_handles_labels()[1]
    assert any(label.startswith("proof's upper formula ell*N*(z + m + 1)") for label in labels), labels
    assert plots.x_value({"params": {"N": 60, "M": 8}, "size": {"var": "n", "value": 8}}, "n") == ("n", 8.0)
    entry = {"value": 16.0, "constant": "none"}
    assert plots.deciding_line(entry, {"verdict": "tight", "leading_constant_here": "2"})[1] == 32.0
    assert plots.deciding_line(entry, {"verdict": "within bound (not tight)"}) is None


def test_a_record_may_carry_its_own_finding():
    from attnsim.verify.findings import carried

    rec = {"claim": "tint.size", "paper": "tint", "params": {}, "numerics": "none", "seed": 0,
           "extra": {"finding": {"text": "a stream 340x wider"}}}
    (f,) = carried("tint", [rec, dict(rec)])  # one finding per distinct text
    assert f.text == "a stream 340x wider" and f.link == "tint.size" and f.records == (rec,)
    assert carried("anna", [rec]) == []


def test_a_legend_taller_than_the_figure_makes_the_figure_taller(tmp_path):
    from attnsim.verify.report import plots

    fig, (ax,) = plots.figure(width=3.0, height=2.0)
    lines = [ax.plot([1, 2], [k, k + 1], label=f"a long legend entry number {k}")[0] for k in range(30)]
    fig.legend(lines, [line.get_label() for line in lines], loc="lower center", ncol=1)
    plots.save(fig, tmp_path / "tall.png")  # the texts alone need more than 2 inches: no "bottom >= top"
    assert (tmp_path / "tall.png").stat().st_size > 1000
