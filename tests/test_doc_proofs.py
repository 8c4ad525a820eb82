"""docs/proofs.md held to the prover's code: the claims and call counts of its tables, the obligation and identity
names, the sizes the output identities run, the solvers' limits, the twins it lists, and the ANNA and TinT rows.

Every number is read from the page and recomputed from the code, so an edit on either side that breaks the
other fails here. The solvers themselves run only on Lemma B.4's four code rows (about two seconds); the Two
Heads plan rows and the relay rows are counted, not solved.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest
import sympy as sp
import z3
from doc_page import Page
from doc_page import collapsed as _flat

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna import message_code as MC
from attnsim.sim.anna import relay_plan as RP
from attnsim.sim.oracle import OracleSpec
from attnsim.sim.two_heads import plan as P
from attnsim.theory.formulas import expand_definitions, parse
from attnsim.verify.prove import anna, anna_twins, beyond, cvc5kit, identities, outputs, run, tint, tint_twins
from attnsim.verify.prove.claims import CLAIMS, obligations
from attnsim.verify.prove.z3kit import nondegenerate
from attnsim.verify.twins import all_twins

ROOT = Path(__file__).parents[1]
_PAGE = Page("proofs.md")
DOC = _PAGE.text
FLAT = _PAGE.flat
_find = _PAGE.find
_table = _PAGE.table
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _section(heading: str) -> str:
    """The page from ``heading`` to the next heading of any level."""
    start = DOC.index(heading)
    nxt = re.search(r"^#", DOC[start + len(heading):], flags=re.M)
    return DOC[start:start + len(heading) + nxt.start()] if nxt else DOC[start:]


def _claim_id(label: str) -> str:
    """'Lemma 3.1 (§3)' -> 'two_heads.lemma_3_1'."""
    kind, number = re.match(r"(Lemma|Corollary|Theorem|Claim) ([0-9A-Z.]+)", label).groups()
    short = {"Lemma": "lemma", "Corollary": "cor", "Theorem": "thm", "Claim": "claim"}[kind]
    return f"two_heads.{short}_{number.replace('.', '_').lower()}"


def _expr(text: str) -> sp.Expr:
    """A formula as the page writes it (·, −, ², ⌈⌉, H'L', implicit products) as a sympy expression."""
    s = text.strip()
    for a, b in (("−", "-"), ("·", "*"), ("²", "**2"), ("⌈", "ceiling("), ("⌉", ")"), ("H'L'", "(Hp*Lp)"),
                 ("H'", "Hp"), ("L'", "Lp"), ("Δ", "Delta")):
        s = s.replace(a, b)
    s = re.sub(r"\)\s*\(", ")*(", s)
    s = re.sub(r"(?<=[\w)])\s+(?=[\w(])", "*", s)
    return parse(s)


def _value(expr: sp.Expr, **values: int) -> sp.Expr:
    return expr.xreplace({sp.Symbol(k, positive=True): sp.Integer(v) for k, v in values.items()})


FORMULA = r"[\w()·−+/⌈⌉²']+(?: [−+] [\w()·−+/⌈⌉²']+)*"
GRID = [dict(zip(("fused", "n", "H", "L", "Hp", "Lp", "jobs", "chunks"), v))
        for v in itertools.product((0, 1), (1, 2, 5), (1, 3), (1, 2), (1, 2, 3), (1, 2), (1, 7), (0, 1, 4))]


def _same_formula(page: str, exact: str) -> None:
    a, b = _expr(page), parse(exact)
    for point in GRID:
        assert _value(a, **point) == _value(b, **point), (page, exact, point)


# -- the two claim tables ----------------------------------------------------------------------------------------

THEOREMS = "| construction | theorem (for every size in range) | its proof |"
PROVED = "| claim | statement proved for all sizes |"


@pytest.mark.parametrize("header", [THEOREMS, PROVED], ids=["theorems", "proved"])
def test_each_claim_table_lists_the_claims_the_prover_has_a_plan_for(header):
    """Both tables of the page have one row per Two Heads claim that ``attnsim prove`` proves, no more."""
    rows = [_claim_id(row[0]) for row in _table(header)]
    assert sorted(rows) == sorted(CLAIMS)


def _call_formulas() -> list[tuple[str, str]]:
    """(claim, formula) for every call count the two tables write out."""
    found = []
    for row in _table(THEOREMS):
        m = re.search(rf"(?:calls = ({FORMULA})$|({FORMULA}) calls$)", row[1])
        if m:
            found.append((_claim_id(row[0]), m.group(1) or m.group(2)))
    for row in _table(PROVED):
        for m in re.finditer(rf"calls = ({FORMULA})", row[1]):
            found.append((_claim_id(row[0]), m.group(1).rstrip(".,;")))
    return found


def test_the_call_counts_in_the_tables_are_the_paper_refs_formulas():
    """Lemma 3.1, Corollary 3.2, Lemma 3.3, Theorem 3.4, Claim B.6 and Theorem 5.1: each call count the page
    writes equals the claim's exact ``calls`` formula in paper_refs/two_heads.toml (the formula the prover's
    ``counts[calls]`` rows hold the plan to), at a grid of n, chunks, jobs, H, L, H', L' and both schemes."""
    found = _call_formulas()
    assert {c for c, _ in found} == {"two_heads.lemma_3_1", "two_heads.cor_3_2", "two_heads.lemma_3_3",
                                      "two_heads.thm_3_4", "two_heads.claim_b_6", "two_heads.thm_5_1"}
    assert len(found) == 12  # each of the six in both tables
    for claim, text in found:
        _same_formula(text, get_claim(claim).resources["calls"].exact)


def test_theorem_3_5_counts_as_theorem_3_4_with_its_per_head_enumeration():
    """Theorem 3.5's row: calls as Theorem 3.4's, with (2 − fused)·n² calls per head (the jobs of one head and
    layer)."""
    row = dict((r[0], r[1]) for r in _table(THEOREMS))["Theorem 3.5"]
    per_head = _find(rf"calls as Theorem 3\.4's with ({FORMULA}) per head", row).group(1)
    c35, c34 = get_claim("two_heads.thm_3_5").resources, get_claim("two_heads.thm_3_4").resources
    _same_formula("L·⌈" + per_head + "·H/(H'L')⌉", c35["calls"].exact)
    _same_formula("L·⌈" + per_head + "·H/(H'L')⌉", c34["calls"].exact)
    _same_formula(per_head + "·H·L", c35["jobs"].exact)


def test_theorem_5_1_chunks_and_theorem_3_4_job_length_are_the_plans():
    """Theorem 5.1's chunk count ⌈(N − s − r)/(b − s − r)⌉ (0 when N ≤ s + r) and Theorem 3.4's common job length
    min(N, b) + 1, as the page writes them, against ``plan.num_chunks`` and ``plan.job_length`` (the functions the
    construction and the prover run) and paper_refs' definition of chunks."""
    row = dict((_claim_id(r[0]), r[1]) for r in _table(PROVED))
    chunks = _expr(_find(rf"chunks = ({FORMULA}) \(0 when N ≤ s \+ r\)", row["two_heads.thm_5_1"]).group(1))
    length = _expr(_find(r"`plan\.job_length` = (min\(N, b\) \+ 1) rows", row["two_heads.thm_3_4"]).group(1)
                   .replace("min", "Min"))
    defs = get_claim("two_heads.thm_5_1").definitions
    toml = expand_definitions(parse("chunks"), {k: v for k, v in defs.items() if k != "b"})
    checked = 0
    for N, b, r, s in itertools.product(range(1, 20), range(2, 8), range(1, 5), range(0, 4)):
        if s + r >= b:
            continue
        want = P.num_chunks(P.INT, N, b, r, s)
        page = 0 if N <= s + r else _value(chunks, N=N, b=b, r=r, s=s)
        assert page == want == _value(toml, N=N, b=b, r=r, s=s), (N, b, r, s)
        assert _value(length, N=N, b=b) == P.job_length(P.INT, N, b)
        checked += 1
    assert checked > 500


# -- the obligations and the per-call identities ----------------------------------------------------------------

def _all_obligations() -> list:
    return [ob for claim in CLAIMS for ob in obligations(claim)]


def test_the_obligations_listed_are_the_ones_the_prover_declares():
    """"The obligations": every kind of row the prover has for the Two Heads claims is named there, and every
    name there is one (the part before a bracket: ``coverage[step]`` names the coverage rows of every step)."""
    section = _section("### The obligations")
    named = {t for t in re.findall(r"`([^`]+)`", section) if "_" not in t and "/" not in t}
    page = {t.split("[")[0] for t in named}
    code = {ob.name.split("[")[0] for ob in _all_obligations()}
    assert page == code


def test_every_result_is_proved_for_both_schemes_and_length_conventions():
    """"Every result below is proved for both length conventions and both schemes ... Claim B.6 has normaliser
    calls only": the variants of each claim's plan rows, and Theorem 5.1's with and without sinks."""
    _find(r"Every result below is proved for both length conventions and both schemes \(.*?Claim B\.6 has "
          r"normaliser calls only\)")
    both = {f"scheme={s} length={n}" for s in ("paper", "fused") for n in ("paper", "strict")}
    for claim in CLAIMS:
        variants = {ob.variant for ob in obligations(claim)} - {"any"}
        if claim == "two_heads.lemma_3_3":
            assert variants == set()  # packing has no scheme or length
        elif claim == "two_heads.claim_b_6":
            assert variants == {v for v in both if "scheme=paper" in v}
        elif claim in ("two_heads.thm_5_1", "two_heads.thm_1_4"):
            assert variants == {f"{v} sinks={s}" for v in both for s in ("no", "yes")}
        else:
            assert variants == both


def test_theorems_1_1_and_1_4_carry_the_obligations_the_table_names():
    """"Theorem 1.1 | Theorem 3.4's and Theorem 3.5's obligations", "Theorem 1.4 | Theorem 5.1's obligations", and
    Theorem 3.5's count by induction, which only the causal plans have. Kinds of rows are compared: Theorems 1.1
    and 1.4 state only their calls, so they have no ``counts[jobs]`` row."""
    row = dict((_claim_id(r[0]), r[1]) for r in _table(PROVED))
    names = {c: {ob.name.split("[")[0] for ob in obligations(c)} for c in CLAIMS}
    of = [_claim_id(m) for m in re.findall(r"(Theorem \d\.\d)'s", row["two_heads.thm_1_1"])]
    assert of == ["two_heads.thm_3_4", "two_heads.thm_3_5"]
    assert names["two_heads.thm_1_1"] == names[of[0]] | names[of[1]]
    of = [_claim_id(m) for m in re.findall(r"(Theorem \d\.\d)'s", row["two_heads.thm_1_4"])]
    assert of == ["two_heads.thm_5_1"]
    assert names["two_heads.thm_1_4"] == names[of[0]]
    assert "by induction on n" in row["two_heads.thm_3_5"]
    assert {c for c in CLAIMS if "count.induction" in names[c]} == {"two_heads.thm_3_5", "two_heads.thm_1_1"}


def test_the_per_call_identities_listed_are_the_ones_proved():
    """"Per-call identities": one bullet per identity of ``verify/prove/identities.py`` (normaliser, ratio, fused,
    signed recombination), each of which sympy proves."""
    bullets = re.findall(r"^\* ([a-z ]+?)(?: call)?(?: \(|:)", _section("### Per-call identities"), flags=re.M)
    proved = identities.prove_all()
    assert sorted(bullets) == sorted(i.name for i in proved)
    assert all(i.proved for i in proved)


# -- the output identities' sizes -------------------------------------------------------------------------------

def test_the_output_identities_run_at_the_sizes_the_page_gives():
    """The output identity's sizes: three blocks with a partial last one (b = 2, N = 5), two heads of width 2, two
    layers, a packed oracle with H' = L' = 2; for Theorem 5.1 three chunks with a partial last one at the stated
    b, r and N; Lemma 3.3's packing identity with H'L' + 1 jobs. Read off ``outputs.setup``, which
    ``attnsim prove`` runs."""
    m = _find(r"The sizes are chosen so that every call shape occurs: (\w+) blocks with a partial last one "
              r"\(b = (\d+), N = (\d+)\), (\w+) heads of width (\d+), (\w+) layers, a packed oracle with "
              r"H' = L' = (\d+); for Theorem 5\.1 (\w+) chunks with a partial last one \(b = (\d+), r = (\d+): "
              r"N = (\d+), or N = (\d+) with a sink\)")
    blocks, b, N, heads, width, layers, packed, chunks, wb, wr, wN, wNs = m.groups()
    for length in ("paper", "strict"):
        st = outputs.setup("two_heads.thm_3_4", "paper", length, None)
        bb = OracleSpec.block_size(st.M, length)
        assert (bb, st.N, st.H, st.m, st.L) == (int(b), int(N), WORDS[heads], int(width), WORDS[layers])
        assert P.num_blocks(P.INT, st.N, bb) == WORDS[blocks] and st.N % bb != 0
        spec = st.oracle(st.m)
        assert (spec.heads, spec.layers) == (int(packed), int(packed))
        for sinks, want_N in ((False, wN), (True, wNs)):
            st = outputs.setup("two_heads.thm_5_1", "paper", length, sinks)
            bb, r, s = OracleSpec.block_size(st.M, length), st.mask.r, getattr(st.mask, "s", 0)
            assert (bb, r, st.N) == (int(wb), int(wr), int(want_N))
            n_chunks = P.num_chunks(P.INT, st.N, bb, r, s)
            assert n_chunks == WORDS[chunks]
            assert (st.N - s - r) % (bb - s - r) != 0  # the last chunk is partial
    jobs = _find(r"the packing identity \(H'L' \+ (\d+) symbolic jobs\)").group(1)
    sizes = outputs.run_output("two_heads.lemma_3_3", "any", {}).sizes
    assert sizes["jobs"] == sizes["Hp"] * sizes["Lp"] + int(jobs)


# -- the solvers ------------------------------------------------------------------------------------------------

def test_the_solver_limits_are_the_codes():
    """z3's default limit per query, cvc5's for the Two Heads rows and for the ANNA rows, and the per-M fallback's
    bound."""
    z3_units = _find(r"default (\d+) million units per query").group(1)
    assert run.RLIMIT == int(z3_units) * 10**6
    cvc5_units = _find(r"\(`rlimit-per`, ([\d ]+) units\)").group(1)
    assert cvc5kit.RLIMIT == int(cvc5_units.replace(" ", ""))
    anna_units = _find(r"cvc5 re-checks each under 10\^(\d+) resource units").group(1)
    assert beyond.CVC5_RLIMIT == 10 ** int(anna_units)
    assert run.M_BOUND == int(_find(r"proved for every N with each M up to (\d+)").group(1))


def test_a_counterexample_is_first_sought_at_three_blocks_of_three_tokens():
    """"a counterexample is sought first at a non-degenerate size (at least three blocks of at least three
    tokens)": the least N and M that ``z3kit.nondegenerate`` allows."""
    blocks, tokens = (WORDS[w] for w in _find(r"at least (\w+) blocks of at least (\w+) tokens").groups())
    N, M = z3.Int("N"), z3.Int("M")
    cons = nondegenerate({"N": N, "M": M})

    def allowed(n: int, m: int) -> bool:
        s = z3.Solver()
        s.add(*cons, N == n, M == m)
        return s.check() == z3.sat

    assert allowed((blocks - 1) * tokens + 1, tokens)
    assert not allowed((blocks - 1) * tokens, tokens)  # two full blocks only
    assert not allowed(10 * tokens, tokens - 1)  # blocks too short


# -- the twins --------------------------------------------------------------------------------------------------

def _items(text: str) -> list[str]:
    return [x.strip() for x in text.split(",")]


def test_the_two_heads_plan_twins_are_all_listed():
    """``attnsim prove --twins`` breaks the plan in as many ways as the page lists (distinct twins of
    ``verify/twins/two_heads_plan.py``; one twin registered on several claims counts once)."""
    listed = _find(r"breaks the plan in the ways of `verify/twins/two_heads_plan\.py` \(([^)]*)\)").group(1)
    names = {t.name for t in all_twins() if t.kind == "plan" and t.claim.startswith("two_heads.")}
    assert len(_items(listed)) == len(names)


def test_the_six_bugs_outside_the_plan_are_the_tests_twins():
    """"Six bugs outside the plan (...) are kept as prover twins in tests/test_prove_outputs.py": the count in
    words, the list in brackets and the file's ``BUGS``."""
    word, listed = _find(r"(\w+) bugs outside the plan \(((?:[^()]|\([^()]*\))*)\) are kept as prover twins in "
                         r"`tests/test_prove_outputs\.py`").groups()
    tree = ast.parse((ROOT / "tests" / "test_prove_outputs.py").read_text())
    bugs = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "BUGS" for t in node.targets))
    assert WORDS[word.lower()] == len(_items(listed)) == len(bugs.elts)


def test_the_anna_and_tint_twins_are_the_ones_listed():
    """ANNA: four planted bugs caught, and the capacity one larger as "prover only"; the relay's replay at N = 64,
    P = 16. TinT: two twins."""
    anna_text = _section("## ANNA")
    listed = _find(r"`verify/prove/anna_twins\.py`\): (.*?) — each gives a counterexample", _flat(anna_text)).group(1)
    caught = [t for t in anna_twins.TWINS if t.observable]
    assert len(_items(listed)) == len(caught)
    assert [t.name for t in anna_twins.TWINS if not t.observable] == ["capacity_plus_one"]
    assert "(s + 2 k D + 1)" in _flat(anna_text) and "prover only" in anna_text
    N, Pm = _find(r"the relay at N = (\d+), P = (\d+)", _flat(anna_text)).groups()
    assert anna_twins._relay_point({}) == {"protocol": "sort", "N": int(N), "P": int(Pm)}
    tint_text = _flat(_section("## TinT"))
    listed = _find(r"`verify/prove/tint_twins\.py`\): (.*?); planted in", tint_text).group(1)
    assert len(re.split(r"\), ", listed)) == len(tint_twins.TWINS)


# -- ANNA -------------------------------------------------------------------------------------------------------

def test_every_anna_obligation_is_named_and_counted():
    """The ANNA section names each obligation of ``attnsim prove anna`` and counts them as the code declares: the
    relay's rows (the two lemmas included) and Lemma B.4's code rows."""
    text = _flat(_section("## ANNA"))
    named = set(re.findall(r"`([^`]+)`", text))
    assert {ob.name for ob in anna.obligations()} <= named
    relay, code = (int(x) for x in _find(r"all (\d+) relay rows and \d+ of the (\d+) code rows", text).groups())
    assert len(anna.relay_obligations()) == relay
    assert len(anna.code_obligations()) == code


def test_cvc5_confirms_the_code_rows_the_page_says():
    """"3 of the 4 code rows; the `collision` row ... rests on z3 alone": z3 proves Lemma B.4's four rows and cvc5,
    under its ANNA limit, confirms all but ``collision``."""
    text = _flat(_section("## ANNA"))
    confirmed, left = _find(r"and (\d+) of the \d+ code rows; the `([^`]+)` row, [^,]*, rests on z3 alone",
                            text).groups()
    rows = [beyond.prove_one(ob) for ob in anna.code_obligations()]
    assert all(r.status == "proved" for r in rows)
    assert sum(r.cvc5 == "unsat" for r in rows) == int(confirmed)
    assert [r.obligation for r in rows if r.cvc5 != "unsat"] == [left]


def test_the_relay_and_code_formulas_on_the_page_are_the_codes():
    """The capacity s + 2 k D, a deal's share ⌈(T − m)/k⌉ of T pooled units (at most (T + k − 1)/k), the code's
    T = (alpha − 1)(d − 1) + 1 rows and width rows·base·(Δ + 3) (paper_refs' exact formula), as the page writes
    them, against the functions the relay and the code run."""
    text = _flat(_section("## ANNA"))
    capacity = _expr(_find(r"the capacity (s \+ 2 k D),", text).group(1))
    share = _expr(_find(r"member m exactly (⌈\(T − m\)/k⌉) of T pooled units", text).group(1))
    most = _expr(_find(r"at most (\(T \+ k − 1\)/k) \(`deal\.bound`\)", text).group(1))
    rows = _expr(_find(r"T = (\(alpha − 1\)\(d − 1\) \+ 1) rows", text).group(1))
    width = _expr(_find(r"formula (rows·base·\(Δ \+ 3\)) \(`width`\)", text).group(1))
    for s, k, D in itertools.product(range(1, 5), range(2, 5), range(1, 4)):
        assert _value(capacity, s=s, k=k, D=D) == RP.capacity(s, k, D)
    for T, k in itertools.product(range(0, 15), range(2, 5)):
        for m in range(k):
            got = sum(RP.deal_member(RP.INT, p, k) == m for p in range(T))
            assert got == _value(share, T=T, m=m, k=k)
            assert got <= _value(most, T=T, k=k)
    exact = parse(get_claim(anna.CODE).resources["dimension"].exact)
    for alpha, d, B, delta in itertools.product(range(1, 5), range(1, 5), (2, 3, 7), (0, 2)):
        T = MC.code_rows(alpha, d)
        assert T == _value(rows, alpha=alpha, d=d)
        assert MC.code_width(T, B, delta) == _value(width, rows=T, base=B, Delta=delta) \
            == _value(exact, rows=T, base=B, Delta=delta)


# -- TinT -------------------------------------------------------------------------------------------------------

def test_tint_loop_shapes_are_the_ones_the_theorem_states():
    """"each loop shape with up to 3 auxiliary layers, any number of them simulated, 1 or 2 SGD steps", the reuse
    flags varied once; one ``registers``, ``frame`` and ``written before read`` row per shape, and the
    symbolic-index row."""
    text = _flat(_section("## TinT"))
    most, s1, s2 = (int(x) for x in _find(r"each loop shape with up to (\d+) auxiliary layers, any number of them "
                                          r"simulated, (\d+) or (\d+) SGD steps", text).groups())
    shapes = {(s.layers, s.layers - s.start, s.steps) for s in tint.SHAPES}
    assert shapes == {(n, k, t) for n in range(1, most + 1) for k in range(1, n + 1) for t in (s1, s2)}
    assert sum(not (s.reuse_forward and s.reuse_backward) for s in tint.SHAPES) == 1  # "varied once"
    obs = tint.obligations()
    per_shape = {"registers", "frame", "written before read"}
    assert all(f"`{n}`" in text for n in per_shape | {"written before read (every layer index)"})
    assert len(obs) == len(per_shape) * len(tint.SHAPES) + 1
    assert {ob.name for ob in obs} == per_shape | {"written before read (every layer index)"}
