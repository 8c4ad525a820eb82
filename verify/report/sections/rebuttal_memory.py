"""Report material for the memory questions reviewers asked: the Two Heads simulation against a KV
cache, and ANNA's hash tables and linear-memory Algorithm 2 (Appendix A)."""

from __future__ import annotations


def _latest(records: list[dict], claim: str) -> dict | None:
    """The record of ``claim`` with the largest N (ties: the last one)."""
    rs = [r for r in records if r["claim"] == claim]
    return max(rs, key=lambda r: r["params"].get("N", 0)) if rs else None

def _verdict(r: dict | None) -> str:
    if r is None:
        return "**not run** in this sweep"
    return "**holds**" if r["verdict"] == "pass" else "**does not hold**: " + "; ".join(r["reasons"])

def _mib(b: float) -> str:
    return f"{b / 2**20:.2f}"

def two_heads_memory_section(records: list[dict], out_dir, quick: bool) -> str:
    """KV-cache memory of the simulation: the construction combined online, the batched engine beside it."""
    r = _latest(records, "two_heads.rebuttal_kv_memory")
    md = ["#### Does the simulation need only KV-cache memory?", "",
          "A reviewer asked what the simulation costs in memory; the authors answered that it stores only keys, "
          "values and a constant number of fixed vectors, O(N·d) like a KV cache.", ""]
    if r is not None:
        ex, p = r["extra"], r["params"]
        md += [f"Measured: peak live memory (tracemalloc) of one float64 head, M = {p['M']}, d = {p['d']}, fused "
               f"scheme, measured path `{ex['path']}` (Lemma 3.1's calls fed one at a time and combined online "
               "into each query block's running sums); beside it the batched engine (an engine choice: it holds "
               "one key-block column of scores) and direct attention (N × N scores).", "",
               "| N | construction peak (MiB) | bound 8(N·d + M²) (MiB) | measured / bound | batched engine "
               "(MiB) | direct attention (MiB) |", "|---|---|---|---|---|---|"]
        engine = dict(zip(ex.get("engine_N_sweep", []), ex.get("engine_peak_bytes", [])))
        direct = dict(zip(ex.get("direct_N_sweep", []), ex.get("direct_peak_bytes", [])))
        for n, pk, bd, ratio in zip(ex["N_sweep"], ex["peak_bytes"], ex["bound_bytes"], ex["bound_ratio"]):
            md.append(f"| {n} | {_mib(pk)} | {_mib(bd)} | {ratio:.2f} | "
                      f"{_mib(engine[n]) if n in engine else '—'} | {_mib(direct[n]) if n in direct else '—'} |")
        md += ["", f"Fitted log-log exponent: construction **{ex['exponent']:.3f}** (claimed {ex['claimed_exponent']:g}"
               f" + {ex['slack']})"
               + (f", batched engine {ex['engine_exponent']:.3f}" if "engine_exponent" in ex else "")
               + (f", direct attention {ex['direct_exponent']:.3f}" if "direct_exponent" in ex else "") + ". "
               "The paper states no constant: the measured / bound column is our fitted constant.", ""]
    md += ["Claim (`two_heads.rebuttal_kv_memory`, our words): Lemma 3.1's calls are independent and eq. (1) is a "
           "sum over key blocks, so the construction needs O(N·d + M²) words beyond its input: the output, one "
           "call and one query block's running sums. The authors' O(N·d) holds for the construction at fixed M. "
           "The batched engine's O(N·M + N·d) is a choice of ours for speed, not a cost of the construction.", "",
           f"Verdict: {_verdict(r)}.", ""]
    return "\n".join(md)

def _nearby(table: list[dict], n: int) -> str:
    """Where the reviewer's two figures do appear in the tabulated grid (64 at c = 10, about 900 at N = n)."""
    ell = {(row["N"], row["c"]): row["ell"] for row in table}
    out = []
    if (n, 3.0) in ell:
        out.append(f"ℓ = {ell[(n, 3.0)]} at c = 3, N = {n:,}")
    if (1_000_000, 10.0) in ell:
        out.append(f"ℓ = {ell[(1_000_000, 10.0)]} at c = 10, N = 10⁶")
    return (" For comparison, the same formulas give " + " and ".join(out) + ".") if out else ""

def anna_memory_section(records: list[dict], out_dir, quick: bool) -> str:
    """Review questions: hash tables in practice and the linear-memory Algorithm 2."""
    t = _latest(records, "anna.rebuttal_hash_tables")
    md = ["### Questions from review — ANNA (memory and tables)", "",
          "#### How many hash tables, and how likely is a failure, in practice?", "",
          "A reviewer estimated 64 tables per layer at c = 10, N = 16,000 (against about 900 from a literal reading "
          "of the bound) and asked for the constants and the failure probability; the authors answered that the "
          "constants are beyond their analysis and that η decays polynomially in N.", ""]
    if t is not None:
        ex, p = t["extra"], t["params"]
        md += [f"Constants used (the proof of Theorem A.1, `attnsim.theory.lsh`): ideal family ρ = 1/c², "
               f"p2 = {p['p2']}, p1 = p2^ρ; z = ⌈log_(1/p2)(10N³·ln(N²/δ)^(1/(1−ρ)))⌉, ℓ = ⌈ln(N²/δ)/p1^z⌉, "
               "δ = min(N^(3ρ−1), 1/10), η ≤ ℓN²p2^z + N²(1−p1^z)^ℓ. This z is what the proof's union over the ℓ "
               "tables needs for its η = O(N^(3ρ−1)) (the proof's own 10N³ leaves a factor log N in η); it costs ℓ "
               "a factor (log N)^(ρ/(1−ρ)). The theorem needs ρ < 1/3 (c > √3); rows with ρ ≥ 1/3 are shown "
               "for the arithmetic only.", "",
               f"The reviewer's example, c = {p['c']:g}, N = {p['N']}: **ℓ = {ex['ell']} tables, z = {ex['z']} "
               f"hashes per table, η ≤ {ex['eta_bound']:.3g}**; the asymptotic form N^(3ρ) log N gives "
               f"{ex['ell_asymptotic_ln']:.1f} with ln and {ex['ell_asymptotic_log2']:.1f} with log₂. We could "
               "not reproduce the reviewer's 64 from N^0.03 log N at this N." + _nearby(ex["table"], p["N"]), ""]
        if ex["table"]:
            md += ["| N | c | ρ | z | ℓ | η bound | theorem applies |", "|---|---|---|---|---|---|---|"]
            md += [f"| {row['N']:,} | {row['c']:g} | {row['rho']:.4g} | {row['z']} | {row['ell']:.4g} | "
                   f"{row['eta_bound']:.3g} | {'yes' if row['theorem_applies'] else 'no'} |" for row in ex["table"]]
            md.append("")
        e = ex.get("empirical") or {}
        if e:
            md += [
                f"Empirical η (random hyperplanes, r = 0.2, c = 7, ρ = {e['rho']:.3g}, N = {e['N']}, ℓ = {e['ell']}, "
                f"z = {e['z']}): {e['violating_runs']} of {e['runs']} seeds broke the ANNA definition, "
                f"η̂ = {e['eta_hat']:.3g} (95% CI [{e['eta_ci95'][0]:.3g}, {e['eta_ci95'][1]:.3g}]) against the "
                f"proof's bound {e['eta_proof_bound']:.3g}. Larger N is not feasible to run: ℓ·z hashes per point "
                "and an N² definition check per seed.",
                "",
            ]
    md += ["Claim (`anna.rebuttal_hash_tables`, our words): with the proof's constants, ℓ and z are as tabulated "
           "and the empirical failure rate stays within the proof's union bound.", "", f"Verdict: {_verdict(t)}.", ""]
    m = _latest(records, "anna.rebuttal_linear_memory")
    md += ["#### Does Algorithm 2 really run in linear memory?", "",
           "A reviewer asked about the memory overhead of the hash tables; the authors answered that one table reused "
           "over the ℓ rounds (Algorithm 2) needs only O(N) memory at the same time.", ""]
    if m is not None:
        ex = m["extra"]
        md += ["Measured: peak memory words from the constructions' ledgers, the same hash draws for both "
               f"(hyperplane LSH, r = 0.2, c = 7, m = 8; at the largest N: ℓ = {ex['ell']}, z = {ex['z']}).", "",
               "| N | Algorithm 1 words | Algorithm 2 words | ratio |", "|---|---|---|---|"]
        md += [
            f"| {n} | {a} | {b} | {a / b:.1f} |" for n, a, b in zip(ex["N_sweep"], ex["alg1_words"], ex["alg2_words"])
        ]
        md += ["", f"Fitted log-log exponents: Algorithm 2 **{ex['alg2_exponent']:.3f}**, Algorithm 1 "
               f"**{ex['alg1_exponent']:.3f}** (ℓ grows like N^(3ρ) log N and z like log N, so both carry log "
               f"factors over a short sweep). Algorithm 2's is held to its bound (m + z) N's own exponent over the "
               f"same sweep, {ex['bound_exponent']:.3f} with z = {', '.join(map(str, ex['z_sweep']))}, plus "
               f"{ex['slack']}.", ""]
    md += ["Claim (`anna.rebuttal_linear_memory`, our words): Algorithm 2 gives Algorithm 1's output exactly with "
           "memory linear in N up to the log N code words per bucket.", "", f"Verdict: {_verdict(m)}.", ""]
    return "\n".join(md)
