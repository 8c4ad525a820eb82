"""The obligations of ``attnsim prove anna``: the relay's integer plan and Lemma B.4's code, for every size.

The relay (anna.thm_4_1, our Lemma B.12 conversion; docs/anna_mpc_to_anna.md) and the code
(anna.lemma_b_4) run the functions of ``sim/anna/relay_plan.py`` and ``sim/anna/message_code.py``;
here the *same functions* run on z3 integer terms. k^t (a digit's place) and k^D stay symbolic:
``place`` ≥ 1 and ``top`` = place·k·rest, rest ≥ 1 (a digit below D). For every base k ≥ 2, every
digit count D ≥ 1, every P ≤ k^D, every memory s ≥ 1 and every token, destination and unit:

* ``digit``, ``with digit`` — a digit lies in [0, k); replacing digit t sets it and keeps every other
  digit and the id inside [0, k^D);
* ``arrival.start``, ``arrival.move``, ``arrival.deal``, ``arrival.end`` — the induction over levels
  l = D−1, ..., 0: entering level l a unit's token agrees with its destination on the digits above l
  (true at the start: both are below k^D); a deal along a dimension below l keeps those digits; the
  move of level l makes digit l agree too; after level 0 the token *is* the destination, a machine;
* ``head.one sender``, ``head.receiver`` — in a layer along t, a receiver hears at most one group
  member per head (so Lemma B.4's code runs with alpha = 1), and the count layer's head h reaches
  the member whose digit is one's own plus h;
* ``deal.share``, ``deal.bound`` — in a deal, member m gets ⌈(T − m)/k⌉ of a class's T pooled units
  (an induction over T with the code's :func:`deal_member`), at most (T + k − 1)/k;
* ``load.deal``, ``load.move``, ``load.hold`` — the load argument: after dealing i dimensions a token
  holds at most i more units of a class than its block's average (per class), the move of level l
  hands a token at most s + k l units, and no token holds more than the capacity s + 2 k D of
  :func:`~attnsim.sim.anna.relay_plan.capacity`; the summations over a group's k members are premises
  (stated in each query), the steps are proved;
* ``capacity`` — the code's capacity equals the claim's B of ``paper_refs/anna.toml`` (s = N^eps,
  k = H + 1);
* ``unit tag`` — a unit's (source, sequence, index) packed into one number reads back unchanged.

Lemma B.4: ``round trip`` (one sender's bucket is valid and reads back its id and payload),
``collision`` (two or three different senders in one bucket are never read as one), ``isolation``
(T = (alpha − 1)(d − 1) + 1 rows leave each of alpha senders a row no other shares, when each other
id shares fewer than d rows with it) and ``width`` (the code's width is the claim's exact formula).
"""

from __future__ import annotations

from typing import Any

import sympy as sp
import z3

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna import message_code as MC
from attnsim.sim.anna import relay_plan as RP
from attnsim.theory.formulas import parse
from attnsim.verify.prove.hints import instances
from attnsim.verify.prove.obligations import Obligation, Query
from attnsim.verify.prove.z3kit import Z3, from_sympy

RELAY = "anna.thm_4_1"
CODE = "anna.lemma_b_4"
STATEMENTS = {RELAY: "integer plan proved for every k, D, P, s: the relay's routing and load bound (the layer order "
                     "read off the code, the output checked at instances)",
              CODE: "integer plan proved for every size: Lemma B.4's round trip, collisions, isolation and width "
                    "(the GF(B) code checked at instances)"}
W = {n: z3.Int(n) for n in ("k", "D", "P", "s", "place", "lower", "rest", "m", "x", "y", "x2", "v", "v2", "tok",
                            "dest", "pooled", "h", "T", "K", "S", "R", "i", "l", "src", "seq", "idx", "j", "j2",
                            "j3", "p", "alpha", "d", "B", "Delta", "shared", "held")}


def division(e: Any, b: Any, q: Any, r: Any) -> Any:
    """An instance of the division lemma: e = q b + r with 0 ≤ r < b gives e div b = q, e mod b = r."""
    return z3.Implies(z3.And(e == q * b + r, r >= 0, r < b), z3.And(Z3.div(e, b) == q, Z3.mod(e, b) == r))


def monotone(a: Any, b: Any, c: Any) -> Any:
    """An instance of a ≤ b, c ≥ 0 ⇒ a c ≤ b c."""
    return z3.Implies(z3.And(a <= b, c >= 0), a * c <= b * c)


LEMMA = {n: z3.Int(f"lemma_{n}") for n in ("e", "b", "q", "r", "a", "c")}


def lemma_obligations(claim: str) -> list[Obligation]:
    """The two lemmas whose instances the digit queries carry (fresh names for non-linear products)."""
    e, b, q, r, a, c = LEMMA.values()
    return [Obligation(claim, "lemma.division", "any", lambda: ([b >= 1], division(e, b, q, r), dict(LEMMA))),
            Obligation(claim, "lemma.monotone", "any", lambda: ([], monotone(a, b, c), dict(LEMMA)))]


class Digits:
    """Ids written as (hi k + digit) place + lo, with the division and monotonicity instances they need.

    Every id x ≥ 0 has such a form (hi ≥ 0, 0 ≤ digit < k, 0 ≤ lo < place), so proving a goal for every
    (hi, digit, lo) proves it for every id; k^D = place·k·rest bounds the ids (hi < rest)."""

    def __init__(self) -> None:
        """k ≥ 2, place = k^t ≥ 1, rest ≥ 1, D ≥ 1; no ids yet."""
        self.k, self.place, self.rest = W["k"], W["place"], W["rest"]
        self.hyps: list[Any] = [self.k >= 2, self.place >= 1, self.rest >= 1, W["D"] >= 1]
        self.names: dict[str, Any] = {n: W[n] for n in ("k", "D", "place", "rest")}

    @property
    def top(self) -> Any:
        """k^D."""
        return self.place * self.k * self.rest

    def id(self, name: str) -> tuple[Any, Any, Any, Any]:
        """A token id ``name`` in [0, k^D) and its (hi, digit, lo)."""
        x, hi, dg, lo = W[name], z3.Int(f"{name}_hi"), z3.Int(f"{name}_digit"), z3.Int(f"{name}_lo")
        self.hyps += [hi >= 0, hi < self.rest, dg >= 0, dg < self.k, lo >= 0, lo < self.place,
                      x == (hi * self.k + dg) * self.place + lo]
        self.names[name] = x
        self.known(x, hi, dg, lo)
        return x, hi, dg, lo

    def known(self, x: Any, hi: Any, dg: Any, lo: Any) -> None:
        """Instances for a term x = (hi k + dg) place + lo: its quotients by place, k and place·k."""
        k, place = self.k, self.place
        self.hyps += [division(x, place, hi * k + dg, lo), division(hi * k + dg, k, hi, dg),
                      division(x, place * k, hi, dg * place + lo), monotone(dg, k - 1, place),
                      monotone(hi + 1, self.rest, place * k)]


def _same_above(a: Any, b: Any, place: Any) -> Any:
    """a and b agree on every digit at place and above."""
    return Z3.div(a, place) == Z3.div(b, place)


def relay_obligations() -> list[Obligation]:
    """The relay's obligations (module docstring)."""
    s = W["s"]
    out: list[Obligation] = lemma_obligations(RELAY)

    def add(name: str, build: Any) -> None:
        out.append(Obligation(RELAY, name, "any", build))

    def digit() -> Query:
        g = Digits()
        x = W["x"]
        d = RP.digit(Z3, x, g.place, g.k)
        return g.hyps + [x >= 0], z3.And(d >= 0, d < g.k), {**g.names, "x": x}
    add("digit", digit)

    def with_digit() -> Query:
        g = Digits()
        x, hi, _, lo = g.id("x")
        v = W["v"]
        g.hyps += [v >= 0, v < g.k]
        y_ = RP.with_digit(Z3, x, g.place, g.k, v)
        g.known(y_, hi, v, lo)
        return (g.hyps, z3.And(RP.digit(Z3, y_, g.place, g.k) == v, _same_above(y_, x, g.place * g.k),
                               Z3.mod(y_, g.place) == Z3.mod(x, g.place), y_ >= 0, y_ < g.top), {**g.names, "v": v})
    add("with digit", with_digit)

    def arrival_start() -> Query:
        g = Digits()
        tok, dest = g.id("tok")[0], g.id("dest")[0]
        g.hyps += [division(tok, g.top, 0, tok), division(dest, g.top, 0, dest)]
        return g.hyps, _same_above(tok, dest, g.top), g.names
    add("arrival.start", arrival_start)

    def arrival_move() -> Query:
        g = Digits()
        tok, th, _, tl = g.id("tok")
        dest, _, dd, _ = g.id("dest")
        t_ = RP.move_target(Z3, tok, dest, g.place, g.k)
        g.known(t_, th, dd, tl)
        return (g.hyps + [_same_above(tok, dest, g.place * g.k)],
                z3.And(_same_above(t_, dest, g.place), t_ >= 0, t_ < g.top), g.names)
    add("arrival.move", arrival_move)

    def arrival_deal() -> Query:  # a deal along t below the level l: k^l = place·k·lower, rest = lower·m
        g = Digits()
        tok, th, _, tl = g.id("tok")
        lower, mult, pooled = W["lower"], W["m"], W["pooled"]
        level = g.place * g.k * lower
        new = RP.deal_member(Z3, pooled, g.k)
        t_ = RP.deal_target(Z3, tok, pooled, g.place, g.k)
        g.known(t_, th, new, tl)
        hu, hl = z3.Int("tok_upper"), z3.Int("tok_within")  # hi = upper·lower + within
        g.hyps += [lower >= 1, mult >= 1, g.rest == lower * mult, pooled >= 0, new >= 0, new < g.k,
                   hl >= 0, hl < lower, th == hu * lower + hl, division(th, lower, hu, hl),
                   division(tok, level, hu, (hl * g.k + RP.digit(Z3, tok, g.place, g.k)) * g.place + tl),
                   division(t_, level, hu, (hl * g.k + new) * g.place + tl),
                   monotone(hl + 1, lower, g.place * g.k)]
        return (g.hyps, z3.And(_same_above(t_, tok, level), t_ >= 0, t_ < g.top),
                {**g.names, "lower": lower, "pooled": pooled})
    add("arrival.deal", arrival_deal)

    add("arrival.end", lambda: ([W["P"] >= 1, W["dest"] >= 0, W["dest"] < W["P"],
                                 _same_above(W["tok"], W["dest"], z3.IntVal(1))],
                                z3.And(W["tok"] == W["dest"], W["tok"] < W["P"]),
                                {"P": W["P"], "tok": W["tok"], "dest": W["dest"]}))

    def one_sender() -> Query:
        g = Digits()
        y, hi, _, lo = g.id("y")
        v, v2 = W["v"], W["v2"]
        g.hyps += [v >= 0, v < g.k, v2 >= 0, v2 < g.k]
        x1 = RP.with_digit(Z3, y, g.place, g.k, v)
        x2 = RP.with_digit(Z3, y, g.place, g.k, v2)
        g.known(x1, hi, v, lo)
        g.known(x2, hi, v2, lo)
        return (g.hyps + [RP.head_between(Z3, x1, y, g.place, g.k) == RP.head_between(Z3, x2, y, g.place, g.k)],
                x1 == x2, {**g.names, "v": v, "v2": v2})
    add("head.one sender", one_sender)

    def receiver() -> Query:
        g = Digits()
        x, hi, dg, lo = g.id("x")
        h = W["h"]
        new = Z3.mod(dg + h, g.k)
        z = RP.head_receiver(Z3, x, g.place, g.k, h)
        g.known(z, hi, new, lo)
        g.hyps += [h >= 1, h < g.k, new >= 0, new < g.k]
        return (g.hyps, z3.And(RP.head_between(Z3, x, z, g.place, g.k) == h, z != x,
                               _same_above(z, x, g.place * g.k), Z3.mod(z, g.place) == Z3.mod(x, g.place)),
                {**g.names, "h": h})
    add("head.receiver", receiver)

    k, D = W["k"], W["D"]
    T, m = W["T"], W["m"]

    def share(t: Any) -> Any:  # member m's share of t pooled units: ⌈(t − m)/k⌉
        return Z3.div(t + k - 1 - m, k)
    a, r = z3.Int("T_div_k"), z3.Int("T_mod_k")  # T = a k + r

    def split(t: Any, q: Any, rem: Any) -> list[Any]:  # ⌈(t − m)/k⌉ = (t + k − 1 − m) div k, with t = q k + rem
        up = z3.If(rem > m, 1, 0)
        return [division(t + k - 1 - m, k, q + up, rem + k - 1 - m - up * k)]
    wrap = z3.If(r + 1 < k, 0, 1)
    pieces = ([T == a * k + r, a >= 0, r >= 0, r < k, division(T, k, a, r)] + split(T, a, r)
              + split(T + 1, a + wrap, r + 1 - wrap * k) + split(z3.IntVal(0), z3.IntVal(0), z3.IntVal(0)))
    add("deal.share", lambda: ([k >= 2, m >= 0, m < k, T >= 0] + pieces,
                               z3.And(share(z3.IntVal(0)) == 0, share(T + 1) - share(T) ==
                                      z3.If(RP.deal_member(Z3, T, k) == m, 1, 0)), {"k": k, "m": m, "T": T}))
    add("deal.bound", lambda: ([k >= 2, m >= 0, m < k, T >= 0] + pieces, k * share(T) <= T + k - 1,
                               {"k": k, "m": m, "T": T}))

    K, S, R, i, lvl = W["K"], W["S"], W["R"], W["i"], W["l"]
    D = W["D"]
    load = [k >= 2, K >= 1, S >= 0, T >= 0, R >= 0, i >= 0, lvl >= 0, lvl < D, s >= 1]

    # K = k^i tokens per block; T = the class's units in the group, S = in the k blocks; each member holds
    # at most its block's average plus i (K a ≤ S_c + i K), summed over the k members: K T ≤ S + i K k
    add("load.deal", lambda: (load + [m >= 0, m < k, K * T <= S + i * K * k],
                              K * k * share(T) <= S + (i + 1) * K * k,
                              {"k": k, "K": K, "S": S, "T": T, "i": i, "m": m}))
    # the move of level l (K = k^l): R units of one class from the k members, each within l of its block's
    # average; the class's units are bound for k^l destinations, at most s each (S ≤ s K)
    add("load.move", lambda: (load + [K * R <= S + lvl * K * k, S <= s * K], R <= s + k * lvl,
                              {"k": k, "K": K, "S": S, "R": R, "l": lvl, "s": s}))
    # a token at level l after dealing i ≤ l dimensions: summed over the k classes it holds within i of the
    # block's average, and the block (K = k^i tokens) holds at most s + k (l + 1) a token after the last move
    held = W["held"]
    hold = [i <= lvl, K * held <= S + i * K * k, S <= K * (s + k * (lvl + 1)), held >= 0]
    add("load.hold", lambda: (load + hold,
                              z3.And(held <= RP.capacity(s, k, D), s + k * lvl <= RP.capacity(s, k, D)),
                              {"k": k, "K": K, "S": S, "i": i, "l": lvl, "s": s, "D": D, "held": held}))

    def cap() -> Query:
        c = get_claim(RELAY)
        expr = parse(c.definitions["B"]).replace(lambda e: e.is_Pow and str(e.base) == "N",
                                                 lambda e: sp.Symbol("s"))
        env = {"s": s, "H": k - 1, "D": D}
        return [k >= 2, D >= 1, s >= 1], RP.capacity(s, k, D) == from_sympy(expr, env), {"k": k, "D": D, "s": s}
    add("capacity", cap)

    def tag() -> Query:
        src, seq, idx = W["src"], W["seq"], W["idx"]
        got = RP.unpack_tag(Z3, RP.pack_tag(src, seq, idx, s), s)
        premises = [s >= 1, src >= 0, seq >= 0, seq < s, idx >= 0, idx < s]
        goal = z3.And(got[0] == src, got[1] == seq, got[2] == idx)
        # the division facts on the query's own terms (theorems, see hints): without them the nested div/mod
        # runs past z3's resource limit
        return premises + instances(premises, goal), goal, {"s": s, "src": src, "seq": seq, "idx": idx}
    add("unit tag", tag)
    return out


def code_obligations() -> list[Obligation]:
    """Lemma B.4's obligations (module docstring)."""
    j, j2, j3, p = W["j"], W["j2"], W["j3"], W["p"]
    alpha, d, B, delta = W["alpha"], W["d"], W["B"], W["Delta"]
    out: list[Obligation] = []

    def add(name: str, build: Any) -> None:
        out.append(Obligation(CODE, name, "any", build))

    def round_trip() -> Query:
        c, s1, s2 = MC.block_head(j)
        return ([j >= 0], z3.And(MC.single_sender(Z3, c, s1, s2), MC.read_bucket(Z3, c, s1) == j,
                                 MC.read_bucket(Z3, c, p) == p), {"j": j, "p": p})
    add("round trip", round_trip)

    def collision() -> Query:
        heads = [MC.block_head(a) for a in (j, j2, j3)]
        two = [sum(h[t] for h in heads[:2]) for t in range(3)]
        three = [sum(h[t] for h in heads) for t in range(3)]
        return ([j >= 0, j2 >= 0, j3 >= 0, j != j2],
                z3.And(z3.Not(MC.single_sender(Z3, *two)), z3.Not(MC.single_sender(Z3, *three))),
                {"j": j, "j2": j2, "j3": j3})
    add("collision", collision)

    add("isolation", lambda: ([alpha >= 1, d >= 1, W["shared"] >= 0, W["shared"] <= (alpha - 1) * (d - 1)],
                              MC.code_rows(alpha, d) - W["shared"] >= 1,
                              {"alpha": alpha, "d": d, "shared": W["shared"]}))

    def width() -> Query:
        c = get_claim(CODE)
        rows = MC.code_rows(alpha, d)
        env = {"rows": rows, "base": B, "Delta": delta}
        return ([alpha >= 1, d >= 1, B >= 1, delta >= 0],
                MC.code_width(rows, B, delta) == from_sympy(parse(c.resources["dimension"].exact), env),
                {"alpha": alpha, "d": d, "B": B, "Delta": delta})
    add("width", width)
    return out


def obligations() -> list[Obligation]:
    """Every obligation of ``attnsim prove anna``."""
    return relay_obligations() + code_obligations()
