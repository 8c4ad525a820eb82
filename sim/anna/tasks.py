"""Task generators and reference answers: Match2, k-hop induction heads, SUM (§5, App. F, App. E).

Letters of a k-hop string are integers 0..A-1; ``-1`` stands for the paper's ``~`` (does not exist).

k-hop semantics follow the generator of Sanford et al. 2024 (0-based): hop 0 is the
string; hop h at position i looks up the last occurrence t of the previous hop's letter strictly
before the previous hop's position and answers s[t + 1] at position t + 1, or ``~`` (sink) when
there is none. Equivalently hop_k(i) = s[sigma^k(i)] with sigma(i) = 1 + (last t < i with
s[t] = s[i]) and sigma(sink) = sink.
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.anna.errors import AnnaInputError, require

SINK = -1


def match2_labels(x: np.ndarray, modulus: int) -> np.ndarray:
    """Match2(X)_i = 1 iff some j (j = i allowed) has x_i + x_j = 0 (mod modulus)."""
    require(modulus >= 2, "modulus", f"must be >= 2, got {modulus}")
    x = np.asarray(x, dtype=np.int64)
    res = np.mod(x, modulus)
    present = np.zeros(modulus, dtype=bool)
    present[res] = True
    return present[np.mod(-res, modulus)].astype(np.int64)


def match2_batch(rng: np.random.Generator, batch: int, *, N: int = 32, modulus: int = 37,
                 max_tries: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """A balanced Match2 batch (App. G.1): x_i in {1..modulus-1}; each quarter of the batch has
    its fraction of ones in one of [0, .25), [.25, .5), [.5, .75), [.75, 1].

    Our reconstruction: the paper's Algorithm 3 (the Match2 generator) is given in prose only. We rejection-sample
    candidates that aim at a random fraction f of ones: each letter comes with probability f from a "paired" pool (1
    to 4 complementary pairs x, M - x, so it usually finds its partner) and otherwise from a "lonely"
    pool (one side of other pairs, never matched), and keep a candidate if its bin has room.
    """
    require(batch >= 4 and batch % 4 == 0, "batch", f"must be a positive multiple of 4, got {batch}")
    require(N >= 1, "N", f"must be >= 1, got {N}")
    pairs = [(x, modulus - x) for x in range(1, (modulus + 1) // 2) if 2 * x != modulus]
    require(len(pairs) >= 2, "modulus", f"must be >= 5 to balance a Match2 batch, got {modulus}")
    quota = batch // 4
    bins: list[list[np.ndarray]] = [[] for _ in range(4)]
    for _ in range(max_tries):
        order = rng.permutation(len(pairs))
        n_paired = int(rng.integers(1, min(4, len(pairs) - 1) + 1))
        paired = [v for t in order[:n_paired] for v in pairs[t]]
        lonely = [pairs[t][int(rng.integers(2))] for t in order[n_paired:n_paired + int(rng.integers(1, 9))]]
        x = np.where(rng.uniform(size=N) < rng.uniform(), rng.choice(paired, N), rng.choice(lonely, N))
        b = min(3, int(4 * match2_labels(x, modulus).mean()))
        if len(bins[b]) < quota:
            bins[b].append(x)
        if all(len(v) == quota for v in bins):
            xs = np.stack([x for v in bins for x in v])
            return xs, np.stack([match2_labels(x, modulus) for x in xs])
    raise AnnaInputError(f"N: could not fill the four Match2 bins for N={N}, modulus={modulus} in {max_tries} tries")


def hop_string(rng: np.random.Generator, N: int, alphabet: int = 4) -> np.ndarray:
    """A uniform random string of length N over 0..alphabet-1 with no two equal neighbours."""
    require(N >= 1, "N", f"must be >= 1, got {N}")
    require(alphabet >= 2, "alphabet", f"must be >= 2 (neighbours must differ), got {alphabet}")
    s = np.empty(N, dtype=np.int64)
    s[0] = rng.integers(alphabet)
    for i in range(1, N):
        step = int(rng.integers(1, alphabet))
        s[i] = (s[i - 1] + step) % alphabet
    return s


def sigma(s: np.ndarray) -> np.ndarray:
    """sigma(i) = 1 + the last t < i with s[t] = s[i], or SINK (one pass, last-seen table)."""
    s = np.asarray(s, dtype=np.int64)
    last: dict[int, int] = {}
    out = np.full(len(s), SINK, dtype=np.int64)
    for i, letter in enumerate(s.tolist()):
        if letter in last:
            out[i] = last[letter] + 1
        last[letter] = i
    return out


def hop_pointers(s: np.ndarray, k: int) -> np.ndarray:
    """sigma^k(i) for every i, by k sequential applications of the generator rule (SINK absorbs). The rule
    sends p to 1 + the last t < p with s[t] = s[p] (SINK if none): each position's predecessor among the
    positions of its letter, read off one stable sort of the string by letter."""
    require(k >= 0, "k", f"must be >= 0, got {k}")
    s = np.asarray(s, dtype=np.int64)
    by_letter = np.argsort(s, kind="stable")  # each letter's positions, in increasing order
    same = s[by_letter][1:] == s[by_letter][:-1]
    rule = np.full(len(s), SINK, dtype=np.int64)
    rule[by_letter[1:][same]] = by_letter[:-1][same] + 1
    ptr = np.arange(len(s), dtype=np.int64)
    for _ in range(k):
        ptr = np.where(ptr == SINK, SINK, rule[np.maximum(ptr, 0)])
    return ptr


def hop_labels(s: np.ndarray, k: int) -> np.ndarray:
    """The k-hop answer per position: s[sigma^k(i)], or SINK for ``~``."""
    s = np.asarray(s, dtype=np.int64)
    ptr = hop_pointers(s, k)
    return np.where(ptr == SINK, SINK, s[np.maximum(ptr, 0)])


def sum_inputs(rng: np.random.Generator, N: int, M: int) -> np.ndarray:
    """N integers uniform in 1..M (the SUM task of App. E)."""
    require(N >= 1, "N", f"must be >= 1, got {N}")
    require(M >= 1, "M", f"must be >= 1, got {M}")
    return rng.integers(1, M + 1, size=N).astype(np.int64)


def clustered_sphere_points(rng: np.random.Generator, N: int, m: int, r: float) -> tuple[np.ndarray, np.ndarray]:
    """N queries and N keys on the unit sphere in R^m, in clusters of about 4 around random centres.

    Every point lies within chord distance r/2 of its cluster's centre, so a query and the keys of
    its cluster are within r (near); points of different clusters are typically about sqrt(2)
    apart, which puts some inside and some beyond c*r for c*r near 1.4 (inputs for anna.alg_1).
    """
    require(N >= 1, "N", f"must be >= 1, got {N}")
    require(m >= 2, "m", f"must be >= 2, got {m}")
    require(0 < r <= 2, "r", f"must be in (0, 2], got {r}")
    centres = rng.standard_normal((max(1, N // 4), m))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    which = rng.integers(len(centres), size=(2, N))

    def around(idx: np.ndarray) -> np.ndarray:
        base = centres[idx]
        u = rng.standard_normal(base.shape)
        u -= (u * base).sum(axis=1, keepdims=True) * base
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        theta = rng.uniform(0, 2 * np.arcsin(r / 4), size=(len(idx), 1))
        return np.cos(theta) * base + np.sin(theta) * u

    return around(which[0]), around(which[1])
