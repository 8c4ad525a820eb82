"""One option vocabulary: every command's options are walked, and every claim's parameters as the options of
``attnsim check CLAIM``; a name with two meanings (two value types, or a flag and a value), a ``--quick`` with a
``--no-quick`` form, or a record-producing command without ``--json PATH|-`` fails."""

from __future__ import annotations

import json
import subprocess
import sys

import typer.main
from limits import limit

from attnsim.verify.cli.app import app
from attnsim.verify.cli.claim_options import build_options
from attnsim.verify.cli.options import VOCABULARY
from attnsim.verify.registry import all_checkers

CLI = [sys.executable, "-m", "attnsim.verify.cli"]
NO_RECORD: set[str] = set()  # commands that produce no record (none today)


def _options() -> dict[str, dict[str, object]]:
    """command -> option name -> the click parameter; ``check CLAIM`` for every claim, with the options generated
    from its parameters beside the command's own."""
    group = typer.main.get_command(app)
    out: dict[str, dict[str, object]] = {}
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        out[name] = {opt: p for p in cmd.params for opt in (*p.opts, *p.secondary_opts) if opt.startswith("--")}
    for claim, chk in all_checkers().items():
        generated = {opt: p for p in build_options(chk) for opt in p.opts}
        assert not set(generated) & set(out["check"]), f"{claim}: a parameter hides an option of check"
        out[f"check {claim}"] = {**out["check"], **generated}
    return out


SAME_NAME_OTHER_VALUE = {
    "--N": "precision takes a list of lengths, the others one length",
    "--B": "each paper's own letter: ANNA's chunk size B (Prop E.3, an integer), Two Heads' code scale B "
           "(Thm 4.2, a real)",
    "--reuse-forward": "one meaning, two forms: tint-size's switch (--no-reuse-forward turns it off) and "
                       "tint.size's parameter, true or false as every boolean claim parameter is",
    "--reuse-backward": "as --reuse-forward",
}
"""Names whose value type differs between commands (or claims) on purpose, each with its reason."""


def _meaning(p: object) -> tuple[str, bool]:
    declared = getattr(p, "claim_param", None)  # a claim's option: the type its parameter declares
    if declared is not None:
        return declared.type.__name__, False
    kind = p.bare_type() if callable(getattr(p, "bare_type", None)) else type(getattr(p, "type", None)).__name__
    return str(kind), bool(getattr(p, "is_flag", False))


def test_shared_options_mean_one_thing_everywhere() -> None:
    seen: dict[str, dict[str, tuple[str, bool]]] = {}
    for cmd, opts in _options().items():
        for opt, p in opts.items():
            seen.setdefault(opt, {})[cmd] = _meaning(p)
            if opt in VOCABULARY:
                fixed = VOCABULARY[opt].split("{")[0]
                assert (getattr(p, "help") or "").startswith(fixed), f"{cmd} {opt}: not the shared meaning"
    for opt, by_cmd in seen.items():
        assert opt in SAME_NAME_OTHER_VALUE or len(set(by_cmd.values())) == 1, f"{opt} has two meanings: {by_cmd}"
    assert "--no-quick" not in seen, "--quick is a flag everywhere"


def test_every_command_that_produces_a_record_takes_json() -> None:
    missing = [cmd for cmd, opts in _options().items() if cmd not in NO_RECORD and "--json" not in opts]
    assert not missing, f"commands without --json PATH|-: {missing}"


def test_json_dash_writes_json_and_nothing_else_to_stdout() -> None:
    p = subprocess.run([*CLI, "check", "two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2", "--json", "-"],
                       capture_output=True, text=True, timeout=limit(600))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["verdict"] == "pass"
    assert "verdict: pass" in p.stderr  # the printed format went to stderr
