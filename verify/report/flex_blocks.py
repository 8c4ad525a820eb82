"""Cross-check of attnsim's per-mask block counts with FlexAttention's block masks.

``attnsim.sim.masks.Mask.block_count(N, b)`` counts the (query block, key block) tiles of size b
that hold at least one allowed entry — the tiles a blockwise simulation must visit. PyTorch's
``torch.nn.attention.flex_attention.create_block_mask`` computes the same thing for its kernel:
per query block, the key blocks that are partly (``kv_num_blocks``) or fully (``full_kv_num_blocks``)
unmasked. For causal, sliding-window and sink masks (two_heads Defs 2.3–2.5) this module builds
the same mask as a FlexAttention ``mask_mod`` (written independently of ``Mask._rule``) and
compares the two counts at the same block size.

Tiles are not calls. Each row also shows what the simulation spends, from the exact-count formulas
in ``paper_refs`` (via ``theory``; "—" where a claim has no formula registered yet):

* unmasked (two_heads.lemma_3_1): 2 calls per tile (A, then B/A), 1 with fused values;
* causal (two_heads.thm_3_5): an off-diagonal tile takes 4 calls (A and B/A for the key offsets
  ≤ and > the query's offset, because a causal oracle masks by in-block offset), a diagonal tile 2
  — 2n² in all, against n(n+1)/2 tiles; the fused scheme of the same construction (``two_heads.causal`` with
  ``scheme="fused"``) needs 2 and 1: n²;
* sliding window / sinks (two_heads.thm_5_1): no tiles at all — overlapping oracle windows of M
  tokens advance by M − r (M − s − r), a constant number of calls each;
* the synthetic token: an oracle of length M holds M real tokens plus the synthetic one under the
  ``paper`` convention (max_len = M + 1) but only M − 1 under ``strict``; at the kernel's block size
  M the strict convention therefore tiles with b = M − 1 and visits more tiles (column "strict").

FlexAttention pads N up to a multiple of the block size and marks the tiles of the padded last block
as partial, so with N not a multiple of M its partial/full split differs while the total agrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnsim.paper_refs import load
from attnsim.sim.masks import Causal, Full, Mask, Sink, SlidingWindow
from attnsim.theory.formulas import FormulaError, as_number, evaluate

CALL_CLAIMS = {"full": "two_heads.lemma_3_1", "causal": "two_heads.thm_3_5",
               "window": "two_heads.thm_5_1", "sink": "two_heads.thm_5_1"}


def flex_available() -> tuple[bool, str]:
    """Whether the installed torch has FlexAttention's ``create_block_mask`` (and why not)."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask  # noqa: F401
    except ImportError as exc:
        return False, f"torch with FlexAttention is not installed ({exc})"
    return True, ""


def _family(mask: Mask) -> str:
    if isinstance(mask, Sink):
        return "sink"
    if isinstance(mask, SlidingWindow):
        return "window"
    return "causal" if isinstance(mask, Causal) else "full"


def mask_mod(mask: Mask):
    """The FlexAttention mask_mod (b, h, q, kv) -> bool tensor of an attnsim mask (True = attend)."""
    fam = _family(mask)
    if fam == "full":
        return lambda b, h, q, kv: q >= 0
    if fam == "causal":
        return lambda b, h, q, kv: kv <= q
    if fam == "window":
        r = mask.r  # type: ignore[attr-defined]
        return lambda b, h, q, kv: (kv <= q) & (q - kv < r)
    s, r = mask.s, mask.r  # type: ignore[attr-defined]
    return lambda b, h, q, kv: (kv <= q) & ((kv < s) | (q - kv < r))


def flex_tiles(mask: Mask, N: int, block: int) -> tuple[int, int]:
    """(partial, full) non-empty tiles of FlexAttention's block mask (CPU)."""
    from torch.nn.attention.flex_attention import create_block_mask

    bm = create_block_mask(mask_mod(mask), None, None, N, N, device="cpu", BLOCK_SIZE=block)
    partial = int(bm.kv_num_blocks.sum())
    full = int(bm.full_kv_num_blocks.sum()) if bm.full_kv_num_blocks is not None else 0
    return partial, full


def predicted_calls(mask: Mask, N: int, M: int, fused: bool) -> int | None:
    """Calls of the construction for ``mask`` (one head, one layer) from its paper_refs formula, if any."""
    claim_id = CALL_CLAIMS[_family(mask)]
    claim = next(c for c in load("two_heads").claims if c.id == claim_id)
    res = claim.resources.get("calls")
    if res is None or not res.exact:
        return None
    values = {"N": N, "M": M, "strict": 0, "fused": int(fused), "psi": 0, "H": 1, "L": 1, "Hp": 1, "Lp": 1,
              "r": getattr(mask, "r", 0), "s": getattr(mask, "s", 0), "causal": int(mask.causal)}
    try:
        return as_number(evaluate(res.exact, claim.definitions, values))  # type: ignore[return-value]
    except FormulaError:
        return None


@dataclass(frozen=True)
class Row:
    """One mask and size: attnsim's tiles and calls against FlexAttention's block counts."""
    mask: str
    N: int
    M: int
    ours: int
    ours_strict: int
    flex_partial: int
    flex_full: int
    calls_paper: int | None
    calls_fused: int | None

    @property
    def flex(self) -> int:
        """FlexAttention's partial plus full blocks."""
        return self.flex_partial + self.flex_full


def default_cases(quick: bool) -> list[tuple[Mask, int, int]]:
    """The masks and sizes compared (smaller when ``quick``)."""
    N, M = (512, 64) if quick else (4096, 256)
    masks: list[Mask] = [Full(), Causal(), SlidingWindow(M // 2), SlidingWindow(M), Sink(4, M // 2)]
    cases = [(m, N, M) for m in masks]
    cases.append((Causal(), N - 24, M))  # N not a multiple of the block size
    return cases


def compare(cases: list[tuple[Mask, int, int]]) -> list[Row]:
    """attnsim's and FlexAttention's block counts for each case."""
    rows = []
    for mask, N, M in cases:
        partial, full = flex_tiles(mask, N, M)
        fused = predicted_calls(mask, N, M, fused=True)
        rows.append(Row(str(mask), N, M, mask.block_count(N, M), mask.block_count(N, M - 1), partial, full,
                        predicted_calls(mask, N, M, fused=False), fused))
    return rows


def _cell(v: Any) -> str:
    return "—" if v is None else str(v)


def markdown(rows: list[Row]) -> str:
    """The comparison as a Markdown table."""
    lines = ["| mask | N | block M | tiles, attnsim | tiles, FlexAttention (partial + full) | equal | "
             "tiles, attnsim strict (b = M−1) | calls, paper scheme | calls, fused |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.mask} | {r.N} | {r.M} | {r.ours} | {r.flex} ({r.flex_partial} + {r.flex_full}) | "
                     f"{'yes' if r.ours == r.flex else 'NO'} | {r.ours_strict} | {_cell(r.calls_paper)} | "
                     f"{_cell(r.calls_fused)} |")
    return "\n".join(lines)


def section(quick: bool) -> str:
    """The report's FlexAttention section (a stated reason instead when torch is absent)."""
    head = ["#### FlexAttention block masks vs attnsim block counts", ""]
    ok, why = flex_available()
    if not ok:
        return "\n".join(head + [f"_Skipped: {why}._", ""])
    rows = compare(default_cases(quick))
    return "\n".join(head + [(__doc__ or "").split("\n\n", 2)[2].strip(), "", markdown(rows), ""])
