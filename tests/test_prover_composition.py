"""The composition rule of the prover: exact levels of independent parts (issue 20).

Proofs must reach the exact levels of REFERENCE.md at any size (rr, histogram_geom),
never prove a refuted claim (the buggy discrete mechanisms), never go below the exact
global level the enumerator computes (random programs), and every proof must survive
the independent checker, which must reject tampered evidence.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest

from randprog import Prog, build, random_program
from samplers import catalogue
from samplers.lang import all_differ, custom, flip, ints, ite, laplace, mechanism, one_differ
from verifiers.enumerate import Enumerator
from verifiers.prover import composition
from verifiers.prover.proof import NoProof, Proof
from verifiers.prover.prove import prove


def _prove(name: str, eps: Fraction | None = None, **params) -> Proof | list[NoProof]:
    return prove(catalogue.get(name).trace(**params), eps, rules=["composition"])


@pytest.mark.parametrize("n", [4, 20, 1000])
def test_rr_proved_at_its_exact_level_at_any_size(n):
    p = _prove("rr", n=n)
    assert isinstance(p, Proof) and p.checked
    assert p.ratio == 3  # lam = 1/4: e^eps = 3 (REFERENCE.md)
    assert math.log(3) <= p.eps_upper <= math.nextafter(math.log(3), math.inf) * (1 + 1e-15)
    assert len(p.evidence["classes"]) == 1 and len(p.evidence["parts"]) == n


@pytest.mark.parametrize("params, level", [({}, Fraction(2)), ({"m": 50, "n": 4, "a": "1/3"}, Fraction(3))])
def test_histogram_geom_proved_at_one_over_a(params, level):
    p = _prove("histogram_geom", **params)
    assert isinstance(p, Proof) and p.ratio == level
    assert p.evidence["combine"] == "max"


def test_all_differ_multiplies_the_part_levels():
    @mechanism(domain=ints(lo=0, hi=1, size=3), neighbours=all_differ)
    def rr_all(x, *, lam="1/4"):
        return tuple(xi ^ flip(lam) for xi in x)

    program = rr_all.trace()
    p = prove(program, rules=["composition"])
    assert isinstance(p, Proof) and p.ratio == 27 and p.evidence["combine"] == "product"
    assert Enumerator(program).global_epsilon().ratio == 27  # the product is the exact level


@pytest.mark.parametrize("name, params", [
    ("histogram_geom_wrong_scale", {}),
    ("above_threshold_geom", {"L": 5}),  # e^eps = 32 > 16 = e^claim (16 at L = 4: the claim holds there)
    ("isvt1_geom", {}),
])
def test_buggy_discrete_mechanisms_get_no_proof_at_their_claim(name, params):
    mech = catalogue.get(name)
    claim = Fraction(mech.claimed_eps(**params))
    assert isinstance(_prove(name, claim, **params), list)


def test_a_claim_is_proved_only_when_the_level_is_within_it():
    assert isinstance(_prove("rr", Fraction(11, 10), n=6), Proof)  # ln 3 = 1.0986 <= 1.1
    no = _prove("rr", Fraction(109, 100), n=6)
    assert isinstance(no, list) and "not within the claim" in no[0].reason


def test_clamped_noise_one_part_is_its_exact_global_level():
    p = _prove("trunc_geom", m=4)
    assert isinstance(p, Proof) and p.ratio == 2
    g = _prove("noisy_max_geom", m=3, n=2)
    assert isinstance(g, Proof) and g.ratio == Fraction(24, 7)  # REFERENCE.md


@pytest.fixture
def composition_only(monkeypatch):
    """Only the composition rule registered (the alignment rules would prove continuous parts)."""
    monkeypatch.setattr("verifiers.prover.prove.RULES", {"composition": "verifiers.prover.composition"})


def test_why_not_names_the_part(composition_only):
    no = _prove("noisy_hist1", n=3)
    assert isinstance(no, list) and "continuous noise" in no[0].reason and no[0].where == "part 0 (output 0)"
    no = _prove("laplace")
    assert isinstance(no, list) and "nothing to compose" in no[0].reason and no[0].where.startswith("draw %")

    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=custom(lambda x, y: x[0] != y[0]))
    def two(x, *, lam="1/4"):
        return (x[0] ^ flip(lam), x[1] ^ flip(lam))

    no = prove(two.trace(), rules=["composition"])
    assert isinstance(no, list) and "custom" in no[0].reason


def test_the_checker_rejects_tampered_evidence():
    program = catalogue.get("histogram_geom").trace(m=4)
    p = composition.attempt(program)
    assert composition.check(program, p) is None

    def tampered(**ev):
        return dataclasses.replace(p, evidence=p.evidence | ev)

    assert "compose to" in composition.check(program, tampered(ratio="3/2"))
    assert "re-sweep gives" in composition.check(program, tampered(
        classes=[dict(p.evidence["classes"][0], ratio="3/2")]))
    parts = [dict(q) for q in p.evidence["parts"]]
    parts[0]["inputs"] = [0, 1]
    assert "lists inputs" in composition.check(program, tampered(parts=parts))
    merged = [dict(p.evidence["parts"][0], outputs=[0, 1])] + p.evidence["parts"][2:]
    assert composition.check(program, tampered(parts=merged)) is not None
    assert "compose by max" in composition.check(program, tampered(combine="product"))
    assert "below the composed level" in composition.check(program, dataclasses.replace(p, eps=0.5))
    assert "malformed" in composition.check(program, tampered(parts=None))


def test_the_checker_rejects_parts_that_share_a_draw():
    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=all_differ)
    def shared(x, *, lam="1/4"):
        z = flip(lam)
        return (x[0] ^ z, x[1] ^ (z ^ flip(lam)))

    program = shared.trace()
    p = composition.attempt(program)
    assert isinstance(p, Proof) and len(p.evidence["parts"]) == 1  # one part: the draw is shared
    one = p.evidence["parts"][0]
    split = [dict(one, outputs=[0], inputs=[0], draws=one["draws"][:1]), dict(one, outputs=[1], inputs=[1])]
    assert "both depend on" in composition.check(program, dataclasses.replace(
        p, evidence=p.evidence | {"parts": split}))


def _shift(e, dx: int, dv: int):
    """A randprog expression with input i read as i + dx and statement k as k + dv."""
    if not isinstance(e, tuple):
        return e
    if e and e[0] == "x" and len(e) == 2:
        return ("x", e[1] + dx)
    if e and e[0] == "v" and len(e) == 2:
        return ("v", e[1] + dv)
    return tuple(_shift(f, dx, dv) for f in e)


def _side_by_side(a: Prog, b: Prog) -> Prog:
    """``a`` and ``b`` run on disjoint inputs and draws, their outputs concatenated (``a``'s relation)."""
    return Prog(f"{a.name}+{b.name}", a.lo + b.lo, a.hi + b.hi, a.neighbours,
                a.stmts + tuple(_shift(st, len(a.lo), len(a.stmts)) for st in b.stmts),
                a.outputs + tuple(_shift(o, len(a.lo), len(a.stmts)) for o in b.outputs), True)


def _finite(seed: int) -> Prog:
    """The first random program from ``seed`` on whose level is finite and above 1 (its output reads its input)."""
    while True:
        prog = random_program(seed)
        if len(prog.points()) <= 12 and 1 < Enumerator(build(prog).trace()).global_epsilon().ratio < math.inf:
            return prog
        seed += 1000


@pytest.mark.parametrize("seed", range(12))
def test_random_side_by_side_programs_compose_to_their_exact_level(seed):
    """Two random programs on disjoint inputs: the proof is the enumerator's exact global level."""
    program = build(_side_by_side(_finite(seed), _finite(seed + 500))).trace()
    p = prove(program, rules=["composition"], time_budget=60)
    assert isinstance(p, Proof), p
    assert sum(1 for q in p.evidence["parts"] if q["inputs"]) >= 2
    g = Enumerator(program).global_epsilon()
    assert p.ratio == max(g.ratio, 1)


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_are_never_proved_below_their_exact_level(seed):
    program = build(random_program(seed)).trace()
    p = prove(program, rules=["composition"], time_budget=60)
    if isinstance(p, list):
        return
    g = Enumerator(program).global_epsilon()
    assert p.ratio >= g.ratio
    assert p.ratio == max(g.ratio, 1)  # the rule is exact: the max / product of exact part levels
    assert math.log(float(p.ratio)) <= p.eps_upper


# -- parts with continuous noise: proved by another rule (here a small real one, tests/laplace_shift_rule.py)
@pytest.fixture
def laplace_rule(monkeypatch):
    """The composition rule with laplace_shift as the only other rule."""
    monkeypatch.setattr("verifiers.prover.prove.RULES", {"composition": "verifiers.prover.composition",
                                                         "laplace_shift": "laplace_shift_rule"})


@pytest.mark.parametrize("n", [3, 1000])
def test_a_laplace_histogram_composes_from_one_part_proof(laplace_rule, n):
    p = _prove("noisy_hist1", n=n)
    assert isinstance(p, Proof) and p.checked and p.ratio is None
    assert Fraction(p.eps) >= Fraction(1, 10) and p.eps == pytest.approx(0.1, abs=1e-15)
    (cls,) = p.evidence["classes"]
    assert cls["rule"] == "laplace_shift" and cls["eps"] == "1/10" and len(p.evidence["parts"]) == n


def test_all_differ_sums_the_part_proofs(laplace_rule):
    @mechanism(domain=ints(lo=0, hi=10, size=3), neighbours=all_differ)
    def hist_all(x, *, eps=0.1):
        return tuple(xi + laplace(1 / eps) for xi in x)

    q = prove(hist_all.trace(), rules=["composition"])
    assert isinstance(q, Proof) and Fraction(q.eps) >= Fraction(3, 10) and q.eps == pytest.approx(0.3, abs=1e-15)
    assert isinstance(prove(hist_all.trace(), Fraction(29, 100), rules=["composition"]), list)


def test_exact_and_proved_parts_compose(laplace_rule):
    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=all_differ)
    def mixed(x, *, lam="1/4", eps=0.5):
        return (x[0] ^ flip(lam), x[1] + laplace(1 / eps))

    p = prove(mixed.trace(), rules=["composition"])
    assert isinstance(p, Proof) and p.ratio is None
    assert p.evidence["ratio"] == "3" and p.evidence["sub_eps"] == "1/2"
    assert math.log(3) + 0.5 <= p.eps <= math.log(3) + 0.5 + 1e-12


def test_the_checker_rechecks_part_proofs(laplace_rule):
    program = catalogue.get("noisy_hist1").trace(n=3)
    p = composition.attempt(program)
    assert composition.check(program, p) is None
    cls = dict(p.evidence["classes"][0])
    cls["proof"] = dict(cls["proof"], eps="1/20", eps_upper=0.05, evidence={"level": "1/20"})
    cls["eps"] = "1/20"
    bad = dataclasses.replace(p, evidence=p.evidence | {"classes": [cls], "sub_eps": "1/20"}, eps=0.05)
    assert "laplace_shift checker rejects" in composition.check(program, bad)


def test_no_other_rule_no_continuous_part_proof(composition_only):
    no = _prove("noisy_hist1", n=3)
    assert isinstance(no, list) and "no other proof rule" in no[0].reason


def test_a_custom_relation_needs_one_part_reading_every_input():
    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=custom(lambda x, y: x[0] != y[0] and x[1] == y[1]))
    def first_only(x, *, lam="1/4"):
        return (x[0] ^ flip(lam), flip(lam))  # the second output reads no input

    p = prove(first_only.trace(), rules=["composition"])
    assert isinstance(p, list) and "whole inputs" in p[0].reason  # one part reads x[0] only

    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=custom(lambda x, y: x != y))
    def both(x, *, lam="1/4"):
        return (x[0] ^ x[1] ^ flip(lam), flip(lam))

    program = both.trace()
    p = prove(program, rules=["composition"])
    assert isinstance(p, Proof) and p.evidence["combine"] == "single"
    assert p.ratio == Enumerator(program).global_epsilon().ratio == 3


def test_unsorted_inputs_are_swept():
    """At x = (5, 0, 0) this program outputs 1 with probability 3/4, at its all_differ neighbour
    (4, 1, 1) never (by hand: eps-DP for no eps).  Both inputs are unsorted: a sweep of sorted
    inputs only (a declared symmetry, once) never compared them and the rule proved eps = 0."""

    @mechanism(domain=ints(lo=0, hi=5, size=3), neighbours=all_differ)
    def liar(x):
        return ite((x[0] == 5) & (x[1] == 0) & (x[2] == 0), flip("3/4"), 0)

    found = prove(liar.trace())
    assert isinstance(found, list)
    assert any("impossible under a neighbour input" in n.reason for n in found if n.rule == "composition")


def test_parts_reading_one_input_compose_by_sum():
    """Two independent Laplace releases of one sum: sequential composition, 1/2 + 1/4 (each part by alignment)."""
    @mechanism(domain=ints(lo=0, hi=3, size=2), neighbours=one_differ)
    def twice(x, *, eps=0.5):
        return (x[0] + x[1] + laplace(1 / eps), x[0] + x[1] + laplace(2 / eps))

    program = twice.trace()
    p = prove(program, rules=["composition"])
    assert isinstance(p, Proof) and p.evidence["combine"] == "sum" and len(p.evidence["parts"]) == 2
    assert p.evidence["sub_eps"] == "3/4" and Fraction(p.eps) >= Fraction(3, 4)
    assert "compose by sum" in composition.check(program, dataclasses.replace(
        p, evidence=p.evidence | {"combine": "max"}))
    assert "below the composed level" in composition.check(program, dataclasses.replace(p, eps=0.7))


def test_a_custom_relation_sums_only_parts_reading_every_input():
    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=custom(lambda x, y: x != y))
    def some(x, *, eps=0.5):
        return (x[0] + laplace(1 / eps), x[0] + x[1] + laplace(1 / eps))  # the first part reads x[0] only

    p = prove(some.trace(), rules=["composition"])
    assert isinstance(p, list) and "nothing to compose" in p[0].reason  # no sum: one part, as before

    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=custom(lambda x, y: x != y))
    def every(x, *, eps=0.5):
        return (x[0] - x[1] + laplace(1 / eps), x[0] + x[1] + laplace(1 / eps))

    p = prove(every.trace(), rules=["composition"])
    assert isinstance(p, Proof) and p.evidence["combine"] == "sum" and len(p.evidence["parts"]) == 2
    assert Fraction(p.eps) >= 2 * Fraction(p.evidence["classes"][0]["eps"])


def test_a_discrete_program_of_one_part_keeps_its_exact_sweep():
    """Sequential composition is only tried where no exact sweep of the whole is: it may be looser."""
    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=one_differ)
    def twice(x, *, lam="1/4"):
        return (x[0] ^ flip(lam), x[0] ^ flip(lam))

    p = prove(twice.trace(), rules=["composition"])
    assert isinstance(p, Proof) and len(p.evidence["parts"]) == 1 and p.ratio == 9


def test_svt34_parallel_is_proved_at_the_sum_of_its_parts():
    """svt3 (0.5) and svt4 (0.325) at c = 2, n = 20, eps = 0.1 read one input with independent noise:
    before, the alignment rule proved only 2.0."""
    p = prove(catalogue.get("svt34_parallel").trace(eps=0.1, n=20))
    assert isinstance(p, Proof) and p.rule == "composition" and p.evidence["combine"] == "sum"
    assert 0.825 <= p.eps <= 0.825 + 1e-9
