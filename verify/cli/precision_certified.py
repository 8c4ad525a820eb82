"""The ``--certified`` part of ``attnsim precision``: run the certified study and print it."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from attnsim.verify.cli.options import human_stream, write_json


def run_certified(Ns: list[int], M: int, d: int, seed: int, sample_blocks: int, target: str, fmt: str,
                  json_out: str | None) -> None:
    """Certified bits needed per N for 2^-N and for ``target`` (``2^-N``: that one only), with growth verdicts."""
    from attnsim.verify.guards import require_memory
    from attnsim.verify.precision.certified import Target
    from attnsim.verify.precision.certified_study import certified_estimate, certified_study
    from attnsim.verify.progress import progress
    from attnsim.verify.records import dumps

    tgt = Target.parse(target)
    tolerance = None if tgt.per_N else tgt.fixed_bits
    if tolerance is not None and not float(tolerance).is_integer():
        from attnsim.verify.registry import UsageError

        raise UsageError(f"--target: with --certified, a fixed target is 2^-B with B a whole number; got {target!r}")
    require_memory(certified_estimate(Ns, M, d, sample_blocks, None if tolerance is None else int(tolerance)))
    rows = 1 + (tolerance is not None)
    with progress(Console(stderr=True), "precision: certified bits needed", len(Ns) * rows) as bar:
        def step(now: str) -> None:
            bar.advance(1 if bar.now else 0, now=now)

        result = certified_study(Ns, M, d, seed, sample_blocks, None if tolerance is None else int(tolerance),
                                 progress=step)
        bar.advance(1)
    text = dumps(result, indent=1)
    write_json(result, json_out, text)
    if fmt == "json" and json_out != "-":
        print(text)
    elif fmt != "json":
        print_certified(result, Console(file=human_stream(json_out)))


def print_certified(result: dict, console: Console) -> None:
    """One table per target: N, the smallest certifying arb:BITS, the bits lost, the probes; then the verdict."""
    console.print(f"[bold]two_heads.lemma_3_1[/bold] (paper scheme, {result['decode']} decode): the smallest arb:BITS "
                  f"whose balls certify the target on every sampled row, M={result['M']}, d={result['d']}, "
                  f"seed={result['seed']}, {result['sample_blocks'] or 'all'} sampled query blocks per N")
    for t in result["targets"]:
        table = Table(show_header=True, title=f"{t['claim']}: target {t['target']}")
        for col in ("N", "log2 N", "certified bits needed", "bits lost (BITS − certified)", "probes: BITS → certified",
                    "seconds"):
            table.add_column(col)
        for N, b, loss, probes, sec in zip(result["Ns"], t["bits"], t["loss"], t["probes"], t["seconds"]):
            table.add_row(str(N), f"{math.log2(N):g}", "> cap" if b is None else str(b),
                          "—" if loss is None else f"{loss:.2f}",
                          ", ".join(f"{k}→{v:g}" for k, v in probes.items()), f"{sec:.1f}")
        console.print(table)
        g = t["growth"]
        console.print(f"  growth in N against O({g['bound']}): [bold]{g['verdict']}[/bold] — {g['why']}")
