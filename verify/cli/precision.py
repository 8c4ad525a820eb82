"""``attnsim precision CLAIM``: bits needed per N, the fit against log2 N, and the verdict.

Example::

    attnsim precision two_heads.lemma_3_1 --N 64,256,1024,4096 --M 32
    attnsim precision two_heads.lemma_3_1 --N 64,256,1024 --M 32 --family fixed --target 2^-12
    attnsim precision two_heads.lemma_3_1 --N 64,256,1024 --M 32 --blocks-format float:fp32 --decode-format float:fp32
    attnsim precision two_heads.thm_3_5 --N 64,256,1024 --M 32
    attnsim precision two_heads.thm_5_1 --N 64,256,1024,4096 --M 32 --window 8 --sinks 2

Claims: two_heads.lemma_3_1, two_heads.thm_3_4 (unmasked, packed), two_heads.thm_3_5 (causal),
two_heads.thm_5_1 (sliding window r + s sinks); ``direct`` is attention under the claim's mask.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    bounded,
    check_format,
    check_json_path,
    format_option,
    human_stream,
    json_option,
    max_memory_option,
    render_rows,
    seed_option,
    write_json,
)
from attnsim.verify.limits import CHECK_SECONDS
from attnsim.verify.registry import INT_MAX, UsageError

# Kept literal so that ``attnsim --help`` need not import the numerics; a test holds them equal to
# ``attnsim.verify.precision.study``'s CLAIMS, CONSTRUCTIONS and FAMILIES.
CLAIMS = ("two_heads.lemma_3_1", "two_heads.thm_3_4", "two_heads.thm_3_5", "two_heads.thm_5_1")
CONSTRUCTIONS = ("paper", "fused", "direct")
FAMILIES = ("float", "fixed")
console = Console()


def _ints(text: str, what: str) -> list[int]:
    """A comma-separated list of distinct positive integers (an empty entry, ``64,,128``, is refused)."""
    parts = [v.strip() for v in text.split(",")]
    if not text.strip() or any(not v for v in parts):
        raise UsageError(f"--{what}: expected comma-separated integers with no empty entry, got {text!r}")
    if not all(v.isascii() and v.lstrip("-").isdigit() for v in parts):
        raise UsageError(f"--{what}: expected comma-separated integers (digits 0-9), got {text!r}")
    vals = [int(v) for v in parts]
    if min(vals) < 1 or max(vals) > INT_MAX:
        raise UsageError(f"--{what}: expected integers in 1..{INT_MAX:g}, got {text!r}")
    twice = sorted({v for v in vals if vals.count(v) > 1})
    if twice:
        raise UsageError(f"--{what}: {', '.join(map(str, twice))} given more than once (each size once)")
    return vals


def _choices(text: str, what: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list of distinct names from ``allowed``, none empty."""
    parts = [v.strip() for v in text.split(",")]
    if not text.strip() or any(not v for v in parts) or any(v not in allowed for v in parts):
        raise UsageError(f"--{what}: choose from {', '.join(allowed)} (comma-separated); got {text!r}")
    twice = sorted({v for v in parts if parts.count(v) > 1})
    if twice:
        raise UsageError(f"--{what}: {', '.join(twice)} given more than once")
    return tuple(parts)


def _fractions(text: str) -> list[Fraction]:
    try:
        vals = [Fraction(v.strip()) for v in text.split(",") if v.strip()]
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"--scales: expected comma-separated numbers such as 0.5,1,2,4; got {text!r}") from None
    if not vals or not all(Fraction(1, 2 ** 64) <= v <= 2 ** 64 for v in vals):
        raise UsageError(f"--scales: expected numbers in [2^-64, 2^64], got {text!r}")
    return vals


def _fmt_bits(v: float) -> str:
    return "inf" if v == math.inf else ("fail" if v == -math.inf else f"{v:.1f}")


def register(app: typer.Typer) -> None:
    """Add the ``precision`` command to ``app``."""
    @app.command()
    def precision(
        claim: str = typer.Argument(..., help="claim id: " + ", ".join(CLAIMS)),
        N: str = typer.Option("64,256,1024,4096", "--N", help="comma-separated sequence lengths"),
        M: int = typer.Option(32, "--M", **bounded("oracle length (block size)", 2, INT_MAX)),
        target: str = typer.Option("2^-10", help="row-wise relative error to stay below, e.g. 2^-10"),
        format_family: str = typer.Option("float", "--family", help="number format family: float (E.M, mantissa "
                                                                      "searched) or fixed (qI.F)"),
        exp_bits: Optional[int] = typer.Option(None, help="float family: exponent bits E (default 8)"),
        int_bits: Optional[int] = typer.Option(None, help="fixed family: integer bits I (default: sized from the run)"),
        options: str = typer.Option("", help="format options, e.g. rz, sr, sat, acc=8.23 (colon-separated)"),
        constructions: str = typer.Option(",".join(CONSTRUCTIONS), help="paper, fused, direct"),
        d: int = typer.Option(4, "--d", **bounded("embedding dimension", 1, INT_MAX)),
        seed: int = seed_option(),
        input_kind: str = typer.Option("random", "--input", help="random (entries in [-1, 1]) or large (integers "
                                                                  "up to 4: large scores, large A)"),
        sample_blocks: int = typer.Option(16, **bounded("query blocks sampled per N (0: all)", 0, INT_MAX)),
        blocks_format: Optional[str] = typer.Option(None, help="also: error vs N/M at this format"),
        decode_format: Optional[str] = typer.Option(None, "--decode-format", help="also: Lemma 3.1's p/(1-p) decode "
                                                    "conditioning at this format (check's --decode chooses the rule)"),
        scales: Optional[str] = typer.Option(None, help="also: bits needed as W^Q is scaled by these factors "
                                                          "(e.g. 0.5,1,2,4), at N = --scale-N"),
        scale_N: Optional[int] = typer.Option(None, "--scale-N", **bounded("N of the --scales study (default 256)", 2,
                                                                            INT_MAX)),
        window: Optional[int] = typer.Option(None, "--window", **bounded(
                "two_heads.thm_5_1: window r (default M/4)", 1, INT_MAX)),
        sinks: Optional[int] = typer.Option(None, "--sinks", **bounded(
                "two_heads.thm_5_1: attention sinks s (default 1)", 0, INT_MAX)),
        fmt: str = format_option(FORMAT_KINDS["study"], "table"),
        json_out: Optional[str] = json_option(),
        max_memory: Optional[str] = max_memory_option(),
        max_time: Optional[str] = typer.Option(None, "--max-time", help="refuse studies estimated to take longer "
                                               "(e.g. 600, 10min, 2h; default 10min)"),
        certified: bool = typer.Option(False, "--certified", help="two_heads.lemma_3_1: instead, the smallest "
                                       "arb:BITS whose balls certify 2^-N (the rebuttal's target) and --target, per "
                                       "N, with growth verdicts against each row's bound (--target 2^-N: that "
                                       "target only)"),
    ) -> None:
        """Smallest width meeting the target per N; slope in bits per doubling of N, with R²."""
        from attnsim.sim.numerics import backend_kind
        from attnsim.verify import guards
        from attnsim.verify.cost import EXACT_KINDS
        from attnsim.verify.precision.study import bits_study, blocks_study, decode_study, parse_target, scale_study
        from attnsim.verify.progress import progress

        guards.set_memory_limit(max_memory)
        guards.set_time_limit(max_time, CHECK_SECONDS)
        check_format(fmt, FORMAT_KINDS["study"])
        check_json_path(json_out)
        as_json = fmt == "json"
        if claim not in CLAIMS:
            raise UsageError(f"CLAIM: precision sweeps run {', '.join(CLAIMS)}; got {claim!r}")
        if format_family not in FAMILIES:
            raise UsageError(f"--family: must be one of {', '.join(FAMILIES)}, got {format_family!r}")
        if M < 2:
            raise UsageError(f"--M: must be >= 2, got {M}")
        if input_kind not in ("random", "large"):
            raise UsageError(f"--input: must be random or large, got {input_kind!r}")
        cons = _choices(constructions, "constructions", CONSTRUCTIONS)
        if format_family == "float" and int_bits is not None:
            raise UsageError("--int-bits: the float family has no integer bits (--family fixed takes them)")
        if format_family == "fixed" and exp_bits is not None:
            raise UsageError("--exp-bits: the fixed family has no exponent bits (--family float takes them)")
        exp_bits = 8 if exp_bits is None else exp_bits
        if scales and claim != "two_heads.lemma_3_1":
            raise UsageError(f"--scales: the score-scaling study runs two_heads.lemma_3_1 only; got {claim}")
        Ns = _ints(N, "N")
        if scale_N is not None and not scales:
            raise UsageError("--scale-N: sets the N of the --scales study; give --scales with it")
        scale_N = 256 if scale_N is None else scale_N
        blocks = max(math.ceil(n / M) for n in [*Ns, *([scale_N] if scales else [])])
        if sample_blocks > max(16, blocks):
            raise UsageError(f"--sample-blocks: at most {blocks} query blocks exist (N/M at the largest N); "
                             f"got {sample_blocks} (0 samples every block)")
        if certified:
            if claim != "two_heads.lemma_3_1":
                raise UsageError(f"--certified: certifies two_heads.lemma_3_1 only; got {claim}")
            guards.positive(d=d)
            from attnsim.verify.cli.precision_certified import run_certified

            return run_certified(Ns, M, d, seed, sample_blocks if sample_blocks != 16 else 4, target, fmt, json_out)
        if scales:
            _fractions(scales)
        tgt = parse_target(target)
        guards.format_family(format_family, exp_bits, int_bits, options)
        guards.format_option(blocks_format, "--blocks-format")
        if blocks_format and backend_kind(blocks_format) in EXACT_KINDS:
            raise UsageError(f"--blocks-format: the blocks study measures the error of an approximate format; "
                             f"{blocks_format} is exact (its error is 0)")
        guards.format_option(decode_format, "--decode-format")
        if decode_format and backend_kind(decode_format) in EXACT_KINDS:
            raise UsageError(f"--decode-format: the decode study measures the error of an approximate format; "
                             f"{decode_format} is exact (its error is 0)")
        guards.positive(d=d, scale_N=scale_N)
        guards.positive(sample_blocks=sample_blocks, minimum=0)
        guards.require_memory(guards.estimate_precision(Ns, M, d, sample_blocks, scale_N if scales else None,
                                                        len(cons)))
        where = dict(claim=claim, window=window, sinks=sinks)
        with progress(Console(stderr=True), "precision: bits needed", len(Ns) * len(cons)) as bar:
            def step(now: str) -> None:
                bar.advance(1 if bar.now else 0, now=now)

            result = {"claim": claim, "bits": bits_study(
                Ns, M, format_family, tgt, cons, d, seed, exp_bits, int_bits, options, sample_blocks or None,
                input_kind, progress=step, **where)}
            bar.advance(1)
        if blocks_format:
            result["blocks"] = blocks_study(Ns, M, blocks_format, cons, d, seed, sample_blocks or None, input_kind,
                                            **where)
        if decode_format:
            result["decode"] = decode_study(decode_format, seed=seed)
        if scales:
            result["scales"] = scale_study(scale_N, M, _fractions(scales), format_family, tgt, cons, d, seed, exp_bits,
                                           sample_blocks or None)
        from attnsim.verify.records import dumps

        text = dumps(result, indent=1)
        write_json(result, json_out, text)
        if as_json and json_out != "-":
            print(text)
        elif not as_json:
            print_result(result, Console(file=human_stream(json_out), soft_wrap=True))


def print_result(result: dict, console: Console = console) -> None:
    """Print a precision study: bits needed per N, the fit and the verdict."""
    b = result["bits"]
    win = f", window r={b['window']}, sinks s={b['sinks']}" if result["claim"] == "two_heads.thm_5_1" else ""
    console.print(f"[bold]{result['claim']}[/bold]: bits needed for row-wise relative error <= "
                  f"2^{math.log2(b['target']):.4g}, {b['family']} formats, M={b['M']}, d={b['d']}{win}, "
                  f"seed={b['seed']}, "
                  f"input={b['input']}, error over {b['sample_blocks'] or 'all'} sampled query groups per N "
                  "(truth: exact scores, mp exp; direct = attention under the same mask, same format)")
    cons = list(b["constructions"])
    header = ["N", "n = N/M", "format family", *(f"{c}: width (precision)" for c in cons)]
    rows = []
    for i, N in enumerate(b["Ns"]):
        cells = []
        for c in cons:
            v = b["constructions"][c]
            cells.append("> limit" if v["width"][i] is None else f"{v['width'][i]} ({v['precision'][i]})")
        rows.append([str(N), str(math.ceil(N / b["M"])), b["formats"][N], *cells])
    if console.is_terminal:
        table = Table(show_header=True)
        for col in header:
            table.add_column(col)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:  # off a terminal: tab-separated lines, as every command prints its tables there
        print(render_rows(header, rows, "table"), file=console.file, flush=True)
    for c in cons:
        v = b["constructions"][c]
        console.print(f"  {c}: slope {v['slope']:+.2f} bits per doubling of N, R² {v['r2']:.2f} — {v['verdict']}")
        for i, rs in enumerate(v["reasons"]):
            if rs:
                console.print(f"     N={b['Ns'][i]}: narrower widths failed: {rs[0]}")
    if "paper" in cons and "fused" in cons:
        diff = [(p - f) if p is not None and f is not None else None
                for p, f in zip(b["constructions"]["paper"]["width"], b["constructions"]["fused"]["width"])]
        console.print(f"  paper − fused scheme, bits needed per N: {diff}")
    if "blocks" in result:
        bl = result["blocks"]
        console.print(f"\n[bold]error vs merged blocks n = N/M[/bold] at {bl['format']} "
                      "(error bits; fit per doubling of n)")
        for c, rows in bl["rows"].items():
            pts = ", ".join(f"n={r['n']}: {_fmt_bits(r['error_bits'])}" for r in rows)
            console.print(f"  {c}: {pts}   slope {bl['fits'][c]['slope']:+.2f}, R² {bl['fits'][c]['r2']:.2f}")
    if "scales" in result:
        sc = result["scales"]
        console.print(f"\n[bold]bits needed as the scores grow[/bold] (W^Q scaled; N={sc['N']}, M={sc['M']})")
        cons = [c for c in CONSTRUCTIONS if c in sc["rows"][0]]
        for r in sc["rows"]:
            cells = ", ".join(f"{c} {r[c] if r[c] is not None else '> limit'}" for c in cons)
            console.print(f"  scale {r['scale']:g}: log2 A_max {r['log2_A_max']:.1f}: {cells}")
        console.print("  precision bits per bit of log2 A_max: "
                      + ", ".join(f"{c} {v:+.2f}" for c, v in sc["bits_per_log2_A"].items()))
    if "decode" in result:
        de = result["decode"]
        console.print(f"\n[bold]decode A = p/(1-p)[/bold] at {de['format']}: error bits by log2 A")
        console.print("  " + ", ".join(f"{r['log2_A']}: {_fmt_bits(r['error_bits'])}" for r in de["rows"]))
        console.print(f"  slope {de['slope']:+.2f} bits per doubling of A (R² {de['r2']:.2f}); p rounds to 1 from "
                      f"log2 A = {de['first_log2_A_failing']}")
