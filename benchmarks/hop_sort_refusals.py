"""How often the referee refuses a draw of the k-hop protocol (Lemma F.3's 1-hop, Thm F.4's k-hop) with Lemma C.2's
splitter sort: the rows of docs/anna_small_memory.md's tables that the current code runs, measured again.

One draw per seed, from ``--first-seed``: the string (|Sigma| letters) and the sort's random choices both come from
the seed, as the checks of Thm 5.4 and 5.6 by the paper's route draw them. A draw the referee refuses for a load
over s counts as refused; every draw that runs is compared with the sequential 1-hop answer.

    python benchmarks/hop_sort_refusals.py --N 4096 --s 1024 --draws 1300
    python benchmarks/hop_sort_refusals.py --N 4096 --letters 4 --k 16 --s 1332 --draws 200
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from attnsim.sim.anna.khop import khop_mpc, splitter_letter_sort
from attnsim.sim.anna.mpc import MPCLoadError
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.verify.stats import rate_upper


def main() -> None:
    """Run the draws and print the row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--N", type=int, default=4096, help="tokens (default 4096)")
    parser.add_argument("--letters", type=int, default=None, help="|Sigma| (default ceiling(N^(1/2)))")
    parser.add_argument("--s", type=int, default=1024, help="local memory in words (default 1024)")
    parser.add_argument("--k", type=int, default=1, help="hops (default 1)")
    parser.add_argument("--draws", type=int, default=60, help="draws, one a seed (default 60)")
    parser.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0)")
    args = parser.parse_args()
    letters = args.letters or math.isqrt(args.N - 1) + 1
    refused, wrong, began = [], 0, time.monotonic()
    for seed in range(args.first_seed, args.first_seed + args.draws):
        text = hop_string(np.random.default_rng(seed), args.N, letters)
        try:
            run = khop_mpc(text, args.k, memory=args.s, alphabet=letters, sort=splitter_letter_sort(seed))
        except MPCLoadError:
            refused.append(seed)
            continue
        wrong += not np.array_equal(run.labels, hop_labels(text, args.k))
    n = len(refused)
    last = args.first_seed + args.draws - 1
    print(f"N = {args.N}, |Sigma| = {letters}, k = {args.k}, s = {args.s}, seeds {args.first_seed}-{last}: "
          f"{n} of {args.draws} draws refused ({100 * n / args.draws:.2f} %), one-sided 95 % upper bound "
          f"{100 * rate_upper(n, args.draws):.2f} %; {wrong} of the draws that ran wrong; "
          f"{time.monotonic() - began:.0f} s")
    if refused:
        print("refused seeds:", ", ".join(map(str, refused)))


if __name__ == "__main__":
    main()
