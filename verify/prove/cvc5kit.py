"""The second solver of ``attnsim prove``: every query, exported as SMT-LIB, re-checked by cvc5.

A query is ``hyps ∧ ¬goal`` (:func:`~attnsim.verify.prove.z3kit.prove`); z3 prints it as SMT-LIB
(declarations and assertions, integer arithmetic with ``div``/``mod``), cvc5 parses that text and
checks it under a deterministic resource limit (``rlimit-per``), so the answer does not depend on the
machine's load. The non-linear facts the plan's arithmetic turns on (division by a symbolic block size,
multiples of it) are added as instances of two proved schemas (:mod:`~attnsim.verify.prove.hints`);
without them cvc5 settles about 60% of the Two Heads plan's queries within its limit, with them all.
``unsat`` is a proof; ``sat`` a disagreement with z3 (if z3 said unsat) or a counterexample; ``unknown``
means the limit was reached.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import cvc5
import z3

from attnsim.verify.prove import hints

RLIMIT = 100_000  # cvc5 resource units per query (deterministic; a query over it is "unknown")


@dataclass
class Verdict:
    """cvc5's answer on one query: ``unsat``, ``sat`` or ``unknown`` (with why), and its seconds."""

    status: str
    seconds: float
    why: str = ""


UNARY = {"+", "*", "and", "or"}  # z3 prints one-argument sums and conjunctions; SMT-LIB needs two or more


def smt2(hyps: list[Any], goal: Any, lemmas: bool = True) -> str:
    """The query ``hyps ∧ ¬goal`` as SMT-LIB text (declarations and assertions), with z3's one-argument
    ``(+ t)``, ``(* t)``, ``(and t)``, ``(or t)`` written as ``t``; ``lemmas``: with the division and
    monotone-multiple instances of :mod:`~attnsim.verify.prove.hints` on the query's terms (theorems of
    integer arithmetic, so the query's satisfiability is unchanged)."""
    s = z3.Solver(ctx=goal.ctx)
    s.add(*hyps, *(hints.instances(hyps, goal) if lemmas else []))
    s.add(z3.Not(goal))
    return " ".join(_show(e) for e in _parse(s.sexpr()))


def _parse(text: str) -> list[Any]:
    """S-expressions of ``text`` as nested lists of atoms (strings)."""
    tokens = text.replace("(", " ( ").replace(")", " ) ").split()
    stack: list[list[Any]] = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            done = stack.pop()
            stack[-1].append(done[1] if len(done) == 2 and isinstance(done[0], str) and done[0] in UNARY else done)
        else:
            stack[-1].append(tok)
    return stack[0]


def _show(e: Any) -> str:
    return e if isinstance(e, str) else "(" + " ".join(_show(x) for x in e) + ")"


def check(text: str, rlimit: int = RLIMIT) -> Verdict:
    """cvc5 on SMT-LIB ``text`` (no ``check-sat``; it is asked here) with ``rlimit`` resource units."""
    start = time.perf_counter()
    solver = cvc5.Solver(cvc5.TermManager())
    solver.setOption("rlimit-per", str(rlimit))
    solver.setLogic("ALL")
    parser = cvc5.InputParser(solver)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "obligation")
    symbols = parser.getSymbolManager()
    while True:
        command = parser.nextCommand()
        if command.isNull():
            break
        command.invoke(solver, symbols)
    result = solver.checkSat()
    status = "unsat" if result.isUnsat() else "sat" if result.isSat() else "unknown"
    why = str(result.getUnknownExplanation()) if result.isUnknown() else ""
    return Verdict(status, time.perf_counter() - start, why)
