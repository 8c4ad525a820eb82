"""1-hop and k-hop induction heads on the MPC machine (anna.lemma_f_3, anna.thm_f_4; App. F.2).

Input: a string s of N letters, token i on machine i // b (b tokens per machine).

1-hop (Lemma F.3), 3 rounds plus the sort's:
  1. each machine sends its first letter to the previous machine, so every token knows s[i+1];
  2. the items (s[i] N + i, s[i+1]) are sorted by (letter, position). The sort key letter*N + i is one
     word (words are Theta(log N) bits) and holds both the letter and the position, so an item is 3 words
     with its tag. (Items of 5 words, repeating the letter and the position, filled 5/16 of a machine and
     the splitter sort's loads failed on 18 % of draws at N = 4096, s = 1024; docs/anna_small_memory.md.)
     The default sort is :func:`letter_sort`: the items start in position order (token i on machine
     i // b), so a *stable* sort by the letter alone puts them in (letter, position) order; it is the LSD
     radix sort of :mod:`attnsim.sim.anna.mpc_radix` on the letter, passes = ceil(log_f |Sigma|) passes of
     2 ceil(log_f P) + 1 rounds with radix and tree fan-in f = max(2, floor(sqrt(s) / 3)), so it runs at
     any s >= 36 words, s < N included. :func:`splitter_letter_sort` is Lemma C.2's sort instead: our
     splitter-tree sample sort of the whole key (:mod:`attnsim.sim.anna.mpc_splitter_sort`, O(1/eps)
     rounds whatever the alphabet), then one balancing pass (a rank scan and one routing round,
     2 ceil(log_f P) + 1 rounds) that puts exactly b items on every machine, so each machine's
     predecessor is on the machine before it;
  3. each machine sends its last item to the next machine; an item whose sorted predecessor
     (letter' N + j, next') has letter' = s[i] gets sigma(i) = j + 1 with letter next';
  4. the result goes to token i's machine, and the inverse pointer i to sigma(i)'s machine.

k-hop (Theorem F.4) by pointer doubling, one round per bit of k. Token i holds the forward
pointer f = sigma^(2^l)(i), its inverse g = sigma^(-2^l)(i) and the partial answer
a = sigma^(k mod 2^l)(i) with the letters at f and a. In round l, token j sends (f(j), a(j))
to g(j) and g(j) to f(j); so token i learns f(f(i)), a(f(i)) and g(g(i)) in one round, and takes
a <- a(f(i)) when bit l of k is 1. sigma is injective off the sink (App. F.2), so each token
sends and receives at most two messages. [Deviation] The paper's step asks and answers in two
rounds; keeping the inverse pointer halves that: floor(log2 k) + 1 doubling rounds.

Total: 4 + passes (2 D + 1) + floor(log2 k) rounds for k >= 1 with the default sort (D = ceil(log_f P)),
one fewer for k = 0 (no doubling, the answer is s[i]). For a fixed alphabet and s = Theta(N^eps) that
is O(1/eps) + O(log k), the count Thm F.4 states; an alphabet of N^a letters takes O(a / eps) passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import isqrt
from typing import Callable

import numpy as np

from attnsim.sim.anna.errors import require
from attnsim.sim.anna.mpc import MPC, Deliver, Place, Record
from attnsim.sim.anna.mpc_radix import radix_sort
from attnsim.sim.anna.mpc_splitter_sort import SortShape, sort_rounds, splitter_sort
from attnsim.sim.anna.mpc_tree import levels
from attnsim.sim.anna.tasks import SINK
from attnsim.sim.ledger import Ledger

TOKEN_WORDS = 16  # per token and round: its state (7 words) + at most two messages (6 + 3 words)


@dataclass(frozen=True)
class KHopRun:
    """Result of a k-hop run on the MPC machine: labels and pointers after k hops, rounds and machines used."""
    labels: np.ndarray      # s[sigma^k(i)] or SINK
    pointers: np.ndarray    # sigma^k(i) or SINK
    rounds: int
    machines: int
    memory: tuple[tuple[Record, ...], ...] = ()  # every machine's final memory (its "state" records)


Sorter = Callable[..., None]
"""Sorts the 1-hop items: ``sort(mpc, machines, key, block, record_words=, key_words=)`` (as :func:`letter_sort`)."""
MIN_MEMORY = 36  # words: the default sort's radix and fan-in f = floor(sqrt(s) / 3) is at least 2


def radix_fan(memory: int) -> int:
    """f = max(2, floor(sqrt(s) / 3)): the radix and the fan-in of the sort's histogram trees."""
    return max(2, isqrt(memory) // 3)


def letter_sort(alphabet: int, length: int) -> Sorter:
    """The stable LSD radix sort of the items by their letter, key // ``length`` (the string's length N), over
    ``alphabet`` letters (module docstring).

    Relation to Lemma C.2: the lemma sorts arbitrary keys in O(1/eps) rounds (Goodrich et al. 2011, a
    pipelined BSP merge sort we have not reconstructed). Sorting general keys of c log N bits with
    :mod:`attnsim.sim.anna.mpc_radix` takes about 2c/eps passes of O(1/eps) rounds, O(1/eps^2). Lemma F.3
    needs less: its items are already in position order, so only the letter's ceil(log_f |Sigma|) digits
    are sorted, one pass of O(1/eps) rounds for a fixed alphabet (docs/anna_small_memory.md).
    """

    def sort(mpc: MPC, machines: range, key: Callable, block: int, **_: int) -> None:
        f = radix_fan(mpc.s)
        radix_sort(mpc, machines, lambda r: key(r)[0] // length, key_bound=alphabet, base=f, fan=f, per_machine=block,
                   label="1hop.sort")

    return sort


ITEM_WORDS = 3
"""A 1-hop item: (tag, letter * N + position, next letter); the key holds the position and the letter."""
KEY_WORDS = 1
"""Words of the splitter sort's key: letter * N + position, distinct as the sort needs."""
SORT_TAGS = ("khop.1hop.sort.", "khop.1hop.balance.")
"""Ledger tag prefixes of the rounds of Lemma F.3's sort (either sort; the splitter sort's balancing pass included)."""
SORTS = ("splitter", "letter")
"""Lemma F.3's sort: Lemma C.2's splitter-tree sample sort (the default), or the stable letter sort (labelled)."""


def splitter_shortfall(memory: int) -> str | None:
    """Why ``memory`` words are too few for :func:`splitter_letter_sort` (its multicast fans), or None."""
    if SortShape(memory, KEY_WORDS, ITEM_WORDS).fans_fit:
        return None
    return (f"local memory {memory} is too small for the splitter sort's multicast fans (about 768 words); the letter "
            "sort runs in less")


def splitter_letter_sort(seed: int) -> Sorter:
    """Lemma C.2's sort of the 1-hop items by their key letter * N + position (field 1, distinct), then one
    balancing pass (module docstring); :func:`splitter_sort_rounds` is its plan's count."""

    def sort(mpc: MPC, machines: range, key: Callable, block: int, **_: int) -> None:
        short = splitter_shortfall(mpc.s)
        require(short is None, "s", short or "")
        splitter_sort(mpc, machines, key=key, key_words=KEY_WORDS, record_words=ITEM_WORDS, seed=seed,
                      label="1hop.sort")
        f = radix_fan(mpc.s)
        radix_sort(mpc, machines, lambda r: 0, key_bound=1, base=f, fan=f, per_machine=block, label="1hop.balance")

    return sort


def splitter_sort_rounds(memory: int, N: int) -> int:
    """Rounds of :func:`splitter_letter_sort` on the ceil(N / b) machines of the protocol (b = s // 16): the splitter
    sort's plan (the same for every draw) and the balancing pass's 2 ceil(log_f P) + 1."""
    P = -(-N // (memory // TOKEN_WORDS))
    return sort_rounds(SortShape(memory, KEY_WORDS, ITEM_WORDS), P, N) + 2 * levels(P, radix_fan(memory)) + 1


def khop_mpc(s: np.ndarray, k: int, *, memory: int, ledger: Ledger | None = None, deliver: Deliver | None = None,
             place: Place | None = None, sort: Sorter | None = None, alphabet: int | None = None) -> KHopRun:
    """Run k-hop on an MPC machine with local memory ``memory`` words (``deliver``, ``place``: see :class:`MPC`).

    ``sort`` sorts the 1-hop items by their key (letter, position); by default :func:`letter_sort`
    over ``alphabet`` letters (default: the largest letter + 1), which needs ``memory`` >= 36.
    """
    s = np.asarray(s, dtype=np.int64)
    N = len(s)
    require(N >= 2, "N", f"need at least 2 letters, got {N}")
    require(isinstance(k, (int, np.integer)) and k >= 0, "k", f"must be a non-negative integer, got {k!r}")
    b = memory // TOKEN_WORDS
    require(b >= 1, "s", f"local memory {memory} is below {TOKEN_WORDS} words (one token's state and messages)")
    if sort is None:
        require(memory >= MIN_MEMORY, "s", f"local memory {memory} is below {MIN_MEMORY} words (the sort's radix "
                                           "floor(sqrt(s) / 3) must be at least 2)")
        letters = int(s.max(initial=0)) + 1
        require(int(s.min()) >= 0 and (alphabet is None or letters <= alphabet), "alphabet",
                f"letters must lie in 0..{(alphabet or letters) - 1}")
        sort = letter_sort(alphabet or letters, N)
    P = -(-N // b)
    mpc = MPC(P, memory, ledger=ledger, tag="khop", deliver=deliver, place=place)

    def home(i: int) -> int:
        return i // b

    mpc.load({m: [("tok", i, int(s[i])) for i in range(m * b, min(N, (m + 1) * b))] for m in range(P)})

    def successor(m, mem):
        out = [(m, r) for r in mem]
        return out + [(m - 1, ("first", mem[0][2]))] if m > 0 else out

    mpc.round(successor, label="1hop.successor")

    def to_items(m, mem):
        toks = sorted(r for r in mem if r[0] == "tok")
        nxt = {r[1]: r[2] for r in toks}
        first = [r[1] for r in mem if r[0] == "first"]
        items = []
        for _, i, letter in toks:
            after = nxt.get(i + 1, first[0] if first else SINK) if i + 1 < N else SINK
            items.append(("item", letter * N + i, after))
        return items

    mpc.local(to_items)
    sort(mpc, range(P), key=lambda r: (r[1],), block=b, record_words=ITEM_WORDS, key_words=1)

    def neighbour(m, mem):
        out = [(m, r) for r in mem]
        return out + [(m + 1, ("prev", *mem[-1][1:]))] if m + 1 < P and mem else out

    mpc.round(neighbour, label="1hop.neighbour")

    def answer(m, mem):
        items = [r for r in mem if r[0] == "item"]
        prev = [r[1:] for r in mem if r[0] == "prev"]
        out = []
        for t, (_, key, _) in enumerate(items):
            i, letter = key % N, key // N
            before = items[t - 1][1:] if t > 0 else (prev[0] if prev else None)
            if before is not None and before[0] // N == letter:
                f, wf = before[0] % N + 1, before[1]
                out.append((home(f), ("inv", f, i)))
            else:
                f, wf = SINK, SINK
            out.append((home(i), ("state", i, f, wf, i, letter)))
        return out

    mpc.round(answer, label="1hop.deliver")

    def init_state(m, mem):
        inv = {r[1]: r[2] for r in mem if r[0] == "inv"}
        return [(*r, inv.get(r[1], SINK)) for r in mem if r[0] == "state"]

    mpc.local(init_state)
    level = 0
    while k >> level:
        bit = (k >> level) & 1
        mpc.round(_doubling_step(home), label=f"khop.double{level}")
        mpc.local(lambda m, mem, bit=bit: _doubling_update(mem, bit))
        level += 1
    states = sorted((r for mem in mpc.memory for r in mem if r[0] == "state"), key=lambda r: r[1])
    return KHopRun(np.array([r[5] for r in states]), np.array([r[4] for r in states]), mpc.rounds, P,
                   tuple(tuple(mem) for mem in mpc.memory))


def _doubling_step(home: Callable[[int], int]) -> Callable:
    def step(m, mem):
        out = []
        for r in mem:
            _, _, f, wf, a, wa, g = r
            out.append((m, r))
            if g != SINK:
                out.append((home(g), ("fwd", g, f, wf, a, wa)))
            if f != SINK:
                out.append((home(f), ("back", f, g)))
        return out

    return step


def _doubling_update(mem: list[tuple], bit: int) -> list[tuple]:
    fwd = {r[1]: r[2:] for r in mem if r[0] == "fwd"}
    back = {r[1]: r[2] for r in mem if r[0] == "back"}
    out = []
    for r in (r for r in mem if r[0] == "state"):
        _, i, _, _, a, wa, _ = r
        ff, wff, af, waf = fwd.get(i, (SINK, SINK, SINK, SINK))
        if bit:
            a, wa = af, waf
        out.append(("state", i, ff, wff, a, wa, back.get(i, SINK)))
    return out
