"""The monotone neighbour relations ``increasing`` / ``decreasing`` (issue 29, item 1).

CheckDP's INCREASING / DECREASING: every coordinate moves the same way by at most the
sensitivity.  DP compares both orders of a pair, so both names are the symmetric closure,
the union of the boxes ``x' - x in [0, s]^n`` and ``[-s, 0]^n`` (not 0).  Every level here
is checked against a truth computed without the code under test: the relation against
its definition over all pairs of a small domain, exact levels against a brute-force sweep
of the exact distributions and a closed form, proofs against Laplace's and Gauss' closed
forms (a difference of two queries has sensitivity 1 under a monotone move, 2 under
all_differ).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from hybrid.cli import main
from samplers.errors import ParameterError
from samplers.lang import (
    Monotone,
    all_differ,
    clamp,
    decreasing,
    gaussian,
    increasing,
    ints,
    laplace,
    mechanism,
    two_sided_geometric,
)
from samplers.plain.function import statdp
from verifiers.backends import get_backend
from verifiers.prover.prove import prove
from verifiers.prover.proof import Proof


def _monotone(x, xp, s):
    """The definition, written out: not equal, and every move in [0, s] or every move in [-s, 0]."""
    moves = [b - a for a, b in zip(x, xp)]
    return any(moves) and (all(0 <= m <= s for m in moves) or all(-s <= m <= 0 for m in moves))


@pytest.mark.parametrize("s", [1, 2])
@pytest.mark.parametrize("direction", ["increasing", "decreasing"])
def test_pairs_are_the_definition_over_every_pair_of_a_small_domain(s, direction):
    rel = Monotone(sensitivity=s, direction=direction)
    dom = ints(lo=-1, hi=2, size=3).resolve({})
    points = list(dom.points())
    truth = {(x, xp) for x in points for xp in points if _monotone(x, xp, s)}
    assert set(rel.pairs(dom)) == truth and len(list(rel.pairs(dom))) == len(truth)  # no pair twice
    assert all((xp, x) in truth for x, xp in truth)  # symmetric: both orders of every pair
    assert all(rel.contains(x, xp) == ((x, xp) in truth) for x in points for xp in points)
    assert rel.name == (direction if s == 1 else f"{direction}(sensitivity={s})")


def test_increasing_and_decreasing_are_one_relation():
    dom = ints(lo=0, hi=2, size=2).resolve({})
    assert set(increasing.pairs(dom)) == set(decreasing.pairs(dom))
    assert ((0, 0), (1, 0)) in set(increasing.pairs(dom)) and ((1, 1), (0, 2)) not in set(increasing.pairs(dom))


def _difference_geom(rel):
    @mechanism(domain=ints(lo=0, hi=2, size=2), neighbours=rel, name="difference_geom")
    def difference_geom(x, *, a="1/3"):
        return clamp(x[0] - x[1] + two_sided_geometric(a), -3, 3)
    return difference_geom.trace()


def _brute_force_ratio(program, s):
    """The largest ``P(o|x) / P(o|x')`` over every monotone pair, from the exact distributions."""
    enum = get_backend(program, "enumerate")
    points = list(program.domain.points())
    dist = {x: enum.distribution(x) for x in points}
    worst = Fraction(1)
    for x, xp in itertools.product(points, points):
        if _monotone(x, xp, s):
            p, q = dist[x], dist[xp]
            worst = max([worst] + [p[o] / q[o] for o in p if p[o] > 0])
    return worst


@pytest.mark.parametrize("backend", ["enumerate", "bdd", "smt"])
def test_exact_global_level_under_increasing_vs_all_differ(backend):
    """x0 - x1 moves by 1 under a monotone move, by 2 under all_differ: e^eps = 3 vs 9 (a = 1/3)."""
    mono, every = _difference_geom(increasing), _difference_geom(all_differ)
    g = get_backend(mono, backend).global_epsilon()
    assert g.complete and g.ratio == 3
    assert _monotone(g.x, g.x_prime, 1)
    assert get_backend(every, backend).global_epsilon().ratio == 9


def test_exact_level_is_the_brute_force_sweep():
    assert _brute_force_ratio(_difference_geom(increasing), 1) == 3


def _difference_laplace(rel, n=2):
    @mechanism(domain=ints(lo=0, hi=3, size=n), neighbours=rel, name="difference_laplace")
    def difference_laplace(x, *, b=2):
        return x[0] - x[1] + laplace(b)
    return difference_laplace.trace()


def test_prover_proves_the_closed_form_and_no_less():
    """Laplace(b) on x0 - x1: sensitivity 1 under increasing (eps = 1/b), 2 under all_differ."""
    p = prove(_difference_laplace(increasing))
    assert isinstance(p, Proof) and p.checked and p.eps == Fraction(1, 2)
    assert isinstance(prove(_difference_laplace(decreasing), Fraction(1, 2)), Proof)
    assert isinstance(prove(_difference_laplace(increasing), Fraction(49, 100)), list)  # below the truth
    assert prove(_difference_laplace(all_differ)).eps == 1
    s = prove(_difference_laplace(increasing, n=3))  # output x0 - x1: x2 moving alone changes nothing
    assert isinstance(s, Proof) and s.eps == Fraction(1, 2)


def test_sum_of_queries_moves_by_n_under_increasing():
    @mechanism(domain=ints(lo=0, hi=3, size=3), neighbours=increasing, name="sum3")
    def sum3(x, *, b=3):
        return x[0] + x[1] + x[2] + laplace(b)
    p = prove(sum3.trace())
    assert isinstance(p, Proof) and p.checked and p.eps == 1  # all three up by one: 3 / b


def _svt_over(rel, n=4):
    from samplers.catalogue.continuous import _sparse_vector

    @mechanism(domain=ints(lo=-5, hi=5, size=n), neighbours=rel, name="svt_increasing")
    def svt(x, *, eps=1, c=1, T=0):
        return _sparse_vector(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 * c / eps)
    return svt.trace()


def test_monotone_sparse_vector_gets_one_alignment_per_box():
    """Lyu et al.'s SVT with monotone queries (threshold Lap(2/eps), queries Lap(2c/eps); CheckDP's
    svt_increasing) is eps-DP by an alignment chosen per direction: when x' is x increased the
    threshold moves by 1 and the answer above by 1 + d_i (cost eps/2 + eps/2), when decreased
    the threshold stays and the answer above moves by d_i (eps/2).  One alignment for both boxes
    proves only what all_differ gives (3/2 at c = 1)."""
    p = prove(_svt_over(increasing))
    assert isinstance(p, Proof) and p.checked and p.eps == 1
    assert prove(_svt_over(all_differ)).eps == Fraction(3, 2)
    assert {path["box"] for path in p.evidence["paths"]} == {"x >= x'", "x <= x'"}
    assert isinstance(prove(_svt_over(decreasing), Fraction(1)), Proof)
    assert isinstance(prove(_svt_over(increasing), Fraction(99, 100)), list)


@pytest.mark.parametrize("name", ["svt_increasing", "svt_decreasing"])
@pytest.mark.parametrize("n", [5, 20])
def test_checkdp_monotone_svt_proved_at_its_claim(name, n):
    from samplers import catalogue

    mech = catalogue.get(name)
    program = mech.trace(n=n)
    p = prove(program, Fraction(mech.claimed_eps()))
    assert isinstance(p, Proof) and p.checked and p.eps == Fraction(1, 10)  # scales 20 and 20 c: exactly 1/10
    assert isinstance(prove(program, Fraction(99, 1000)), list)


def test_checker_holds_each_box_to_its_own_pairs():
    """The boxes' paths swapped (each box aligned as the other), or one box's paths dropped, or a
    box on a relation that has none: the independent checker refuses."""
    from dataclasses import replace

    from verifiers.prover import alignment

    program = _svt_over(increasing)
    proof = alignment.attempt(program, None)
    assert alignment.confirm(program, proof) is None
    other = {"x >= x'": "x <= x'", "x <= x'": "x >= x'"}
    swapped = [{**q, "box": other[q["box"]]} for q in proof.evidence["paths"]]
    assert alignment.confirm(program, replace(proof, evidence={**proof.evidence, "paths": swapped})) is not None
    one = [q for q in proof.evidence["paths"] if q["box"] == "x >= x'"]
    assert "box" in alignment.confirm(program, replace(proof, evidence={**proof.evidence, "paths": one}))
    every = _svt_over(all_differ)
    boxed = replace(alignment.attempt(every, None), mechanism=every.name)
    boxed = replace(boxed, evidence={**boxed.evidence, "paths": [{**q, "box": "x >= x'"}
                                                                 for q in boxed.evidence["paths"]]})
    assert "box" in alignment.check(every, boxed)


def test_gaussian_sensitivity_under_increasing():
    @mechanism(domain=ints(lo=0, hi=3, size=2), neighbours=increasing, name="difference_gauss")
    def difference_gauss(x, *, sigma=2):
        return x[0] - x[1] + gaussian(sigma)
    p = prove(difference_gauss.trace(), Fraction(1))
    assert isinstance(p, Proof) and p.checked
    assert Fraction(p.evidence["sensitivity_squared"]) == Fraction(1, 4)  # (1 / sigma)^2, not (2 / sigma)^2


DIFFERENCE = '''
def alg(prng, queries, epsilon):
    return queries[0] - queries[1] + prng.laplace(scale=1 / epsilon)
'''


def test_cli_neighbours_increasing_for_a_plain_function(tmp_path, capsys):
    source = tmp_path / "difference.py"
    source.write_text(DIFFERENCE)
    base = ["prove", f"{source}:alg", "--size", "2", "--domain", "0..3"]
    assert main(base + ["--neighbours", "increasing"]) == 0
    out = capsys.readouterr().out
    assert "eps <= 0.1 proved" in out  # epsilon = 0.1: x0 - x1 moves by at most 1
    assert main(base + ["--neighbours", "all_differ"]) == 0
    assert "eps <= 0.2 proved" in capsys.readouterr().out


def test_bad_relation_names_are_refused(tmp_path, capsys):
    source = tmp_path / "difference.py"
    source.write_text(DIFFERENCE)
    code = main(["prove", f"{source}:alg", "--size", "2", "--domain", "0..3", "--neighbours", "monotone"])
    assert code == 2 and "invalid choice: 'monotone'" in capsys.readouterr().err
    with pytest.raises(ParameterError, match="unknown neighbour relation 'increase'.*increasing"):
        statdp(lambda prng, q, epsilon: q[0], size=2, neighbours="increase")
    assert math.isfinite(prove(statdp(lambda prng, q, epsilon: q[0] + prng.laplace(scale=1 / epsilon), size=2,
                                        domain=(0, 3), neighbours="decreasing").trace()).eps)


def test_a_custom_predicate_is_proved_as_the_named_relation_it_equals_or_says_why_not():
    """A Python predicate is opaque to the prover.  Where it has exactly a named relation's pairs on
    the declared domain (every pair compared) it is proved as that relation (the proof says so);
    else the reason says what to declare instead."""
    from dataclasses import replace

    from samplers.lang import custom
    from verifiers.prover import alignment

    up = custom(lambda x, xp: any(b != a for a, b in zip(x, xp)) and all(0 <= b - a <= 1 for a, b in zip(x, xp)),
                name="checkdp_increasing")  # one direction: its symmetric closure is increasing
    p = prove(_difference_laplace(up))
    assert isinstance(p, Proof) and p.checked and p.eps == Fraction(1, 2)  # as under increasing, not all_differ
    assert "'checkdp_increasing' has exactly the pairs of" in p.evidence["covers"]
    assert alignment.confirm(_difference_laplace(up), p) is None
    wider = custom(lambda x, xp: all(abs(b - a) <= 1 for a, b in zip(x, xp)), name="box")  # all_differ
    assert prove(_difference_laplace(wider)).eps == 1
    program = _difference_laplace(up)
    other = replace(program, neighbours=wider)  # the increasing proof does not hold for all_differ's pairs
    assert alignment.check(other, p) is not None
    diagonal = custom(lambda x, xp: all(b - a == 1 for a, b in zip(x, xp)), name="diagonal")
    no = prove(_difference_laplace(diagonal))
    assert isinstance(no, list) and "custom predicate" in no[0].reason and "contains every pair" in no[0].reason
