"""Running-max loops read as max / argmax (issue 29, item 1: CheckDP's noisymax).

The rewrite (:mod:`verifiers.prover.running_max`) must keep the exact meaning of the
program, ties included (``>`` keeps the first maximum, ``>=`` the last).  The truth here
is computed without it: the exact enumerator's law of the original program on every input
of a small domain, with discrete noise so that ties are frequent, compared with the law of
the rewrite; near misses (a compared value that is not the running max, a label that is
not the position, mixed ``>`` and ``>=``) are generated at random and must never change a
law.  Proof levels are the closed forms: noisy max's index is eps-DP, its value n eps / 2.
"""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.lang import all_differ, ints, ite, laplace, mechanism, uniform
from samplers.plain.function import statdp
from verifiers.backends import get_backend
from verifiers.prover import equivalence_check
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove
from verifiers.prover.running_max import checked, normal_form


def _ops(program):
    return [n.op for n in program.nodes]


def test_checkdp_noisymax_is_one_argmax():
    normal = normal_form(catalogue.get("noisymax").trace(n=5)).program
    assert _ops(normal).count("argmax") == 1 and not {"ite", "lt", "le", "or"} & set(_ops(normal))
    top = normal.nodes[normal.outputs[0]]
    assert top.op == "argmax" and top.attr == "first" and len(top.args) == 5
    value = normal_form(catalogue.get("badnoisymax").trace(n=5)).program
    assert _ops(value).count("max") == 4 and "ite" not in _ops(value)


def _loop(strict, value, noise, n=3, lo=0, hi=2):
    @mechanism(domain=ints(lo=lo, hi=hi, size=n), neighbours=all_differ, name="running_max")
    def running_max(x):
        best, bq = 0, None
        for i, q in enumerate(x):
            v = q + noise()
            if i == 0:
                best, bq = 0, v
                continue
            better = v > bq if strict else v >= bq
            best = ite(better, i, best)
            bq = ite(better, v, bq)
        return bq if value else best
    return running_max.trace()


def _same_law(original, rewritten):
    a, b = get_backend(original, "enumerate"), get_backend(rewritten, "enumerate")
    for x in original.domain.points():
        assert a.distribution(x) == b.distribution(x), x


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("value", [False, True])
def test_rewrite_keeps_the_exact_law_with_ties(strict, value):
    program = _loop(strict, value, lambda: uniform(0, 1))
    normal = normal_form(program)
    assert normal.rewrites and "ite" not in _ops(normal.program)
    _same_law(program, normal.program)
    if not value:  # the tie-break is what tells the two apart: > keeps the first maximum, >= the last
        assert get_backend(program, "enumerate").distribution((1, 1, 1))[0 if strict else 2] > 0


def _near_miss(rng):
    """A loop that is a running max or almost one: per step a random comparison, label, compared
    value and update."""
    choices = [(rng.choice(["<", "<=", ">", ">="]), "pos" if rng.random() < 0.9 else "other",
                "max" if rng.random() < 0.9 else "prev", rng.random() < 0.9) for _ in range(3)]
    floats = rng.random() < 0.5

    @mechanism(domain=ints(lo=0, hi=2, size=4), neighbours=all_differ, name="near_miss")
    def near_miss(x):
        vals = [(q * -0.5 if floats else q) + uniform(0, 1) for q in x]
        best, bq, prev = 0, vals[0], vals[0]
        for i, (cmp, label, against, swap) in enumerate(choices, start=1):
            m = bq if against == "max" else prev
            v = vals[i]
            better = {"<": m < v, "<=": m <= v, ">": v > m, ">=": v >= m}[cmp]
            k = i if label == "pos" else (i + 2) % 4
            best = ite(better, k, best) if swap else ite(better, best, k)
            bq = ite(better, v, bq) if swap else ite(better, bq, v)
            prev = v
        return best, bq
    return near_miss.trace()


def test_near_misses_never_change_the_law():
    rng = random.Random(29)
    rewritten = 0
    for _ in range(60):
        program = _near_miss(rng)
        normal = normal_form(program)
        rewritten += normal.rewrites > 0
        _same_law(program, normal.program)
    assert rewritten > 10


@pytest.mark.parametrize("strict", [True, False])
def test_descending_labels_keep_their_tie_break(strict):
    """Labels n-1, n-2, ..: a later answer has a lower label, so '>' keeps the *highest* label among
    tied maxima; read as argmax's lowest-index tie-break it would change the law."""
    @mechanism(domain=ints(lo=0, hi=2, size=3), neighbours=all_differ, name="descending")
    def descending(x):
        best, bq = 2, x[0] + uniform(0, 1)
        for i, q in enumerate(x[1:], start=1):
            v = q + uniform(0, 1)
            better = v > bq if strict else v >= bq
            best, bq = ite(better, 2 - i, best), ite(better, v, bq)
        return best
    program = descending.trace()
    _same_law(program, normal_form(program).program)


def test_a_tree_whose_branches_disagree_is_left_alone():
    """Plain code forks into a tree; here the two subtrees give position 2 different values
    (v2 on one side, v3 on the other): no argmax of one list means that."""
    @mechanism(domain=ints(lo=0, hi=2, size=4), neighbours=all_differ, name="disagree")
    def disagree(x):
        v = [q + uniform(0, 1) for q in x]
        return ite(v[0] < v[1], ite(v[1] < v[2], 2, 1), ite(v[0] < v[3], 2, 0))
    program = disagree.trace()
    normal = normal_form(program)
    assert normal.program.nodes[normal.program.outputs[0]].op == "ite"  # (its left subtree is argmax(v1, v2) + 1)
    _same_law(program, normal.program)


def test_the_independent_check_refuses_a_wrong_rewrite():
    first, last = (_loop(s, False, lambda: laplace(2), n=4) for s in (True, False))
    nf = normal_form(first)
    assert equivalence_check.check(first, nf.program, nf.draws) is None
    problem = equivalence_check.check(last, nf.program, nf.draws)  # the first maximum for the last
    assert problem is not None and "gives" in problem
    assert "z3 answered sat" in equivalence_check._z3(last, nf.program, nf.draws)
    swapped = dict(zip(nf.draws, reversed(list(nf.draws.values()))))
    assert equivalence_check.check(first, nf.program, swapped) is not None


@pytest.mark.parametrize("n", [5, 20])
def test_checkdp_noisymax_proved_at_its_claim(n):
    program = catalogue.get("noisymax").trace(n=n)
    p = prove(program, Fraction(1, 10))
    assert isinstance(p, Proof) and p.checked and p.eps == Fraction(1, 10) and "normal_form" in p.evidence
    assert isinstance(prove(program, Fraction(99, 1000)), list)  # below the truth, eps
    bad = prove(catalogue.get("badnoisymax").trace(n=5))
    assert isinstance(bad, Proof) and bad.eps == Fraction(1, 4)  # the max value: n eps / 2
    assert isinstance(prove(catalogue.get("badnoisymax").trace(n=5), Fraction(1, 10)), list)


PLAIN = '''
def noisy_max_loop(prng, queries, epsilon):
    best, bq = 0, 0.0
    for i in range(len(queries)):
        eta = prng.laplace(scale=2.0 / epsilon)
        if queries[i] + eta {cmp} bq or i == 0:
            best = i
            bq = queries[i] + eta
    return best
'''


@pytest.mark.parametrize("cmp", [">", ">="])
def test_plain_numpy_running_max_is_proved(tmp_path, cmp):
    namespace: dict = {}
    exec(PLAIN.format(cmp=cmp), namespace)
    program = statdp(namespace["noisy_max_loop"], size=5, domain=(0, 10), neighbours="all_differ").trace()
    assert "argmax" not in _ops(program)  # the tracer forks on each comparison: a tree of ite
    p = prove(program, Fraction(1, 10))
    assert isinstance(p, Proof) and p.checked


def test_continuous_backend_reads_the_checked_normal_form():
    program = catalogue.get("noisymax").trace(n=5)
    assert "argmax" in _ops(get_backend(program, "continuous").program)
    assert checked(catalogue.get("svt1").trace()) is not None
    svt = catalogue.get("svt1").trace()
    assert checked(svt) is svt  # nothing to rewrite: the program itself
    narrow = replace(program, domain=ints(lo=0, hi=2, size=5).resolve({}))  # shares program's _meta
    assert checked(narrow).domain == narrow.domain and checked(program).domain == program.domain


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 20])
def test_search_refutes_badnoisymax_and_certifies_noisymax(n):
    """badnoisymax's truth is n eps / 2 (0.25, 1.0): certified above the claim 0.1; noisymax's lower
    bound stays below its proved eps."""
    from hybrid.searcher.budget import Budget
    from hybrid.searcher.search import search

    bad = search(catalogue.get("badnoisymax"), params={"n": n}, claimed_eps=0.1, budget=Budget(samples=600_000))
    assert bad.certified and bad.refuted and 0.1 < bad.eps_lower <= n * 0.05
    good = search(catalogue.get("noisymax"), params={"n": n}, claimed_eps=0.1, budget=Budget(samples=600_000))
    assert good.certified and not good.refuted and 0.09 < good.eps_lower <= 0.1


@pytest.mark.parametrize("name", ["noisymax", "svt_increasing"])
def test_proof_files_of_rewritten_and_boxed_proofs_are_confirmed(name):
    """A proof file of the rewritten loop (node numbers of its normal form) or of a monotone relation
    (paths per box) passes the file's contract and is confirmed again from the traced mechanism;
    the same file with one path's shifts dropped is not."""
    import json

    from hybrid.searcher import proof_file

    program = catalogue.get(name).trace()
    p = prove(program)
    data = json.loads(json.dumps(proof_file.document(p, program)))
    assert proof_file.recheck(data, "proof.json")["confirmed"]
    shifted = next(q for q in data["evidence"]["paths"] if q["shifts"])
    shifted["shifts"] = {}
    assert not proof_file.recheck(data, "proof.json")["confirmed"]


def test_a_comparison_still_needed_elsewhere_is_not_rewritten():
    """AdaptiveSVT's ``ite(middle >= 0, middle, 0.0)`` shares its test with the spending count: a max
    there would add a decision, not remove one (and 0.0 is no int 0: not the compared value)."""
    for n in (2, 5):
        adaptive = catalogue.get("adaptivesvt").trace(n=n)
        assert normal_form(adaptive).program is adaptive

    @mechanism(domain=ints(lo=0, hi=2, size=3), neighbours=all_differ, name="shared")
    def shared(x):
        v = [q + uniform(0, 1) for q in x]
        better = v[0] < v[1]
        return ite(better, v[1], v[0]), ite(better, 5, 7)  # the test is also an output's choice
    program = shared.trace()
    assert normal_form(program).program is program

    @mechanism(domain=ints(lo=0, hi=2, size=1), neighbours=all_differ, name="relu")
    def relu(x):
        g = x[0] + laplace(2)
        return ite(g >= 0, g, 0.0)
    program = relu.trace()
    assert normal_form(program).program is program
