"""``attnsim precision two_heads.lemma_3_1 --certified``: the certified bits needed per N, and their growth
verdict against each row's bound (N for the target 2^-N, log N for a fixed tolerance; docs/precision.md).

Each N is one record of a claim row (``verify/claims/two_heads_precision.py``: ``two_heads.rebuttal_log_bits``
for 2^-N, ``two_heads.rebuttal_log_bits_tolerance`` for 2^-B), and the records of each row are judged by the
growth verdict (:func:`attnsim.verify.growth.judge`), the same as ``attnsim growth`` does over the claim's sweep.
"""

from __future__ import annotations

from typing import Any, Callable

from attnsim.verify.check import run_check
from attnsim.verify.cost import estimate
from attnsim.verify.growth import judge
from attnsim.verify.limits import Estimate

PER_N = "two_heads.rebuttal_log_bits"
TOLERANCE = "two_heads.rebuttal_log_bits_tolerance"


def _rows(per_N: bool, tolerance_bits: int | None) -> list[tuple[str, dict[str, Any]]]:
    return [*([(PER_N, {})] if per_N else []),
            *([(TOLERANCE, {"target_bits": tolerance_bits})] if tolerance_bits is not None else [])]


def certified_estimate(Ns: list[int], M: int, d: int, sample_blocks: int, tolerance_bits: int | None,
                       per_N: bool = True) -> Estimate:
    """The whole study's cost, from its rows' own cost models (the ones each record's check is refused by): the
    largest record's memory, since the records run one after another, and the sum of their times. Held against
    the limits before the first record, so that a study is refused whole rather than after its cheaper points."""
    points = [estimate(claim, {"N": N, "M": M, "d": d, "sample_blocks": sample_blocks}, None)
              for claim, _ in _rows(per_N, tolerance_bits) for N in Ns]
    biggest = max(points, key=lambda e: e.bytes)
    slowest = max(points, key=lambda e: e.seconds or 0.0)
    detail = (f"N={','.join(map(str, Ns))}, M={M}, d={d}, sample blocks={sample_blocks}, {len(points)} records; "
              "estimated from the claims' cost models")
    return Estimate(biggest.bytes, biggest.driver, detail, sum(e.seconds or 0.0 for e in points),
                    slowest.time_driver)


def certified_study(Ns: list[int], M: int, d: int, seed: int, sample_blocks: int, tolerance_bits: int | None,
                    per_N: bool = True, decode: str = "paper",
                    progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Per target (2^-N when ``per_N``, 2^-tolerance_bits when given): a record per N and the growth verdict."""
    rows = _rows(per_N, tolerance_bits)
    out: dict[str, Any] = {"Ns": Ns, "M": M, "d": d, "seed": seed, "sample_blocks": sample_blocks,
                           "decode": decode, "targets": []}
    for claim, extra in rows:
        records = []
        for N in Ns:
            if progress:
                progress(f"{claim.split('.')[1]} N={N}")
            records.append(run_check(claim, {"N": N, "M": M, "d": d, "decode": decode,
                                             "sample_blocks": sample_blocks, **extra}, seed=seed))
        g = judge(claim, "bits", records)
        out["targets"].append({
            "claim": claim, "target": "2^-N" if claim == PER_N else f"2^-{tolerance_bits}",
            "bits": [r["counts"].get("bits") for r in records],
            "loss": [r["extra"]["search"]["loss"] for r in records],
            "probes": [r["extra"]["search"]["probes"] for r in records],
            "seconds": [r["extra"]["search"]["seconds"] for r in records],
            "record_verdicts": [r["verdict"] for r in records],
            "growth": g.as_dict()})
    return out
