"""The alignment proof rule: proved levels of the catalogue, no proof of refuted claims,
exact neighbour-set extremes, and an independent checker that rejects tampered proofs."""

from __future__ import annotations

import dataclasses
import itertools
import random
from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.lang import argmax, custom, ints, ite, laplace, mechanism, one_differ
from verifiers.prover import alignment
from verifiers.prover.linear import Lin
from verifiers.prover.neighbourhood import Differences
from verifiers.prover.proof import NoProof, Proof
from verifiers.prover.prove import prove

TRUE_LEVEL = [
    ("laplace", {}, 0.1),
    ("noisy_hist1", {}, 0.1),
    ("report_noisy_max1", {}, 0.1),
    ("report_noisy_max2", {}, 0.1),
    ("svt1", {}, 0.1),
    ("svt2", {}, 0.1),
    ("numerical_svt", {}, 0.1),
    ("laplace_parallel", {"eps": 0.005, "k": 20}, 0.1),
    ("prefix_sum", {"n": 10}, 1.0),
]


def _program(name: str, **params):
    return catalogue.get(name).trace(**params)


@pytest.mark.parametrize("name,params,level", TRUE_LEVEL)
def test_proved_level_is_the_true_level(name, params, level):
    proof = prove(_program(name, **params), rules=["alignment"])
    assert isinstance(proof, Proof) and proof.checked and proof.rule == "alignment"
    assert abs(float(proof.eps) - level) < 1e-9
    assert proof.eps_upper >= proof.eps


@pytest.mark.parametrize("name,params,level", TRUE_LEVEL)
def test_true_level_as_a_claim_is_proved(name, params, level):
    claim = Fraction(level)  # the float's exact binary value: 0.1 is a little above 1/10
    proof = prove(_program(name, **params), claim, rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps <= claim


def test_svt4_proved_upper_is_one_plus_6c_over_4_eps():
    proof = prove(_program("svt4", eps=0.1, c=1), rules=["alignment"])
    assert isinstance(proof, Proof)
    assert abs(float(proof.eps) - 0.175) < 1e-9
    assert isinstance(prove(_program("svt4"), Fraction(0.1), rules=["alignment"]), list)


BUGGY = ["prefix_sum", "noisy_hist2", "report_noisy_max3", "report_noisy_max4", "svt3", "svt5", "svt6",
         "svt34_parallel", "above_threshold_geom", "isvt1_geom", "histogram_geom_wrong_scale"]


@pytest.mark.parametrize("name", BUGGY)
def test_no_proof_of_a_refuted_claim(name):
    """prefix_sum claims eps but is tested with all_differ, where its level is n eps."""
    mech = catalogue.get(name)
    found = prove(mech.trace(), Fraction(mech.claimed_eps()), rules=["alignment"], time_budget=60)
    assert isinstance(found, list) and all(isinstance(f, NoProof) and f.reason for f in found)


def test_report_noisy_max3_upper_is_n_eps_over_2():
    proof = prove(_program("report_noisy_max3", n=5), rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps == Fraction(1, 4)


def test_no_proof_says_where():
    found = alignment.attempt(_program("svt5"), None)
    assert isinstance(found, NoProof) and "path" in found.where and "%" in found.reason
    gauss = alignment.attempt(_program("gaussian_mechanism"), None)
    assert isinstance(gauss, NoProof) and "Gaussian" in gauss.reason


def test_custom_neighbours_get_no_proof():
    @mechanism(domain=ints(lo=0, hi=3, size=2), neighbours=custom(lambda a, b: sum(a) != sum(b)))
    def summed(x, *, eps=1.0):
        return x[0] + x[1] + laplace(1 / eps)

    found = alignment.attempt(summed.trace(), None)
    assert isinstance(found, NoProof) and "custom" in found.reason


def test_evidence_is_readable_data():
    proof = prove(_program("svt1", n=5), rules=["alignment"])  # n = 3: a path template, 3/40, is cheaper
    ev = proof.to_json()["evidence"]
    assert Fraction(ev["eps"]) == proof.eps and "declared domain" in ev["covers"]
    assert len(ev["paths"]) == 6  # c = 1: the first answer above at 1, ..., 5, or none
    assert max(Fraction(p["cost"]) for p in ev["paths"]) == proof.eps
    above = next(p for p in ev["paths"] if list(p["decisions"].values()) == [1])
    assert all(a.startswith("eta_") and "' = eta_" in a for a in above["alignment"])
    assert ev["z3"]["answers"] == ["unsat"]


def _tampered(proof: Proof, **changes) -> Proof:
    ev = dict(proof.evidence, **changes)
    return dataclasses.replace(proof, evidence=ev, eps=Fraction(ev["eps"]))


def test_checker_rejects_tampered_proofs():
    program = _program("svt1", n=3)
    proof = alignment.attempt(program, None)
    assert alignment.check(program, proof) is None
    unshifted = [dict(p, shifts={}) for p in proof.evidence["paths"]]
    assert alignment.check(program, _tampered(proof, paths=unshifted)) is not None
    assert alignment.check(program, _tampered(proof, eps="1/20")) is not None
    assert alignment.check(program, _tampered(proof, paths=proof.evidence["paths"][1:])) is not None


def test_checker_z3_part_alone_rejects_a_wrong_shift():
    from verifiers.prover import alignment_check

    program = _program("report_noisy_max1", n=3)
    proof = alignment.attempt(program, None)
    eps, groups = alignment_check._read(proof)
    paths = groups[None]
    assert alignment_check.check_z3(program, eps, paths) is None
    wrong = [(dec, {e: (s[0] - 1, *s[1:]) for e, s in shifts.items()}) for dec, shifts in paths]
    assert alignment_check.check_z3(program, eps, wrong) is not None


def _brute_max(diffs: Differences, terms) -> Fraction:
    ranges = [range(-b, b + 1) for b in diffs.bound]
    best = None
    for d in itertools.product(*ranges):
        nz = sum(v != 0 for v in d)
        if nz == 0 or (diffs.kind != "all" and nz != 1):
            continue
        env = {("d", i): v for i, v in enumerate(d)}
        val = sum((w * abs(f.const + sum(k * env[v] for v, k in f.coef.items())) for f, w in terms), Fraction(0))
        best = val if best is None or val > best else best
    return best


@pytest.mark.parametrize("kind", ["one", "all", "replace"])
def test_exact_cost_maximum_matches_brute_force(kind):
    rng = random.Random(7)
    for _ in range(40):
        n = rng.randint(1, 3)
        bound = tuple(rng.randint(1, 2) for _ in range(n)) if kind == "replace" else (rng.randint(1, 2),) * n
        diffs = Differences(kind, n, bound)
        terms = []
        for _ in range(rng.randint(1, 3)):
            coef = {("d", i): Fraction(rng.randint(-2, 2)) for i in rng.sample(range(n), rng.randint(0, n))}
            terms.append((Lin(Fraction(rng.randint(-2, 2)), coef), Fraction(1, rng.randint(1, 4))))
        assert diffs.max_cost(terms) == _brute_max(diffs, terms)
        form = terms[0][0]  # |100 +- form| is 100 +- form on these small differences
        lo, hi = diffs.extremes(form)
        assert hi == _brute_max(diffs, [(Lin(form.const + 100, form.coef), Fraction(1))]) - 100
        assert lo == 100 - _brute_max(diffs, [(Lin(100, {}) - form, Fraction(1))])


@pytest.mark.slow
@pytest.mark.parametrize("name,params", [("svt1", {"n": 100}), ("noisy_hist1", {"n": 1000}),
                                         ("report_noisy_max1", {"n": 100})])
def test_large_sizes_are_proved(name, params):
    proof = prove(_program(name, **params), Fraction(0.1), rules=["alignment"], time_budget=120)
    assert isinstance(proof, Proof) and proof.checked and abs(float(proof.eps) - 0.1) < 1e-9


@pytest.mark.parametrize("name,level,bad", [("partialsum", "1/10", "badpartialsum"),
                                            ("smartsum", "1/5", "badsmartsum")])
def test_checkdp_sums(name, level, bad):
    """CheckDP's partialsum (eps) and smartsum (2 eps) are proved at their levels; their buggy
    twins get no proof at the claims."""
    proof = prove(_program(name), rules=["alignment"])
    assert isinstance(proof, Proof) and proof.checked and proof.eps == Fraction(level)
    twin = catalogue.get(bad)
    assert isinstance(prove(twin.trace(), Fraction(twin.claimed_eps())), list)


def test_masked_decisions_are_not_split():
    from verifiers.prover.paths import paths

    assert len(list(paths(_program("svt1", n=10, c=1)))) == 11  # first answer above at 1..10, or none
    assert len(list(paths(_program("svt1", n=10, c=2)))) == 1 + 10 + 45
    assert len(list(paths(_program("report_noisy_max1", n=7)))) == 7


def test_replace_one_covers_the_declared_domain():
    from samplers.lang import replace_one

    @mechanism(domain=ints(lo=0, hi=3, size=2), neighbours=replace_one)
    def counts(x, *, eps=1.0):
        return tuple(xi + laplace(2 / eps) for xi in x)

    proof = prove(counts.trace(), rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps == Fraction(3, 2)  # a record moves by up to 3
    assert "declared domain" in proof.evidence["covers"]


# -- regressions from the prover audit: proofs from outside (files) are confirmed on every path


def _released_on_one_path(m: int, target: int):
    """argmax of m pure-noise draws (no input: those paths cost nothing), and x[0] + Laplace(10)
    released only when the argmax is ``target``: exactly 1/10-DP (closed form: on that event
    of probability 1/m the release is the Laplace mechanism, elsewhere nothing reads x)."""

    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=one_differ)
    def released(x, *, m=m, target=target):
        k = argmax([laplace(1) for _ in range(m)])
        return (k, ite(k == target, x[0] + laplace(10), 0))

    return released.trace()


def _without_shifts(proof: Proof) -> Proof:
    """The proof with every shift dropped: it claims eps 0."""
    paths = [dict(p, shifts={}, cost="0", alignment=["no draw shifted"]) for p in proof.evidence["paths"]]
    return _tampered(proof, paths=paths, eps="0")


def test_confirm_discharges_every_path_the_checker_samples(monkeypatch):
    """The checker re-asks z3 on a sample of the paths (12; 2 past 300 nodes; none past 1000) and
    runs random draws; a proof file is confirmed on every path.  With the sampling cut to its
    large-program setting (2 paths, and no random runs) the checker accepts eps 0 for a 1/10-DP
    program; confirm must not."""
    from verifiers.prover import alignment_check

    program = _released_on_one_path(12, 5)
    monkeypatch.setattr(alignment, "_template", lambda program: None)  # a per-path proof (a template costs 1/10 too)
    proof = alignment.attempt(program, None)
    assert isinstance(proof, Proof) and proof.eps == Fraction(1, 10) and len(proof.evidence["paths"]) > 2
    assert alignment.confirm(program, proof) is None
    fake = _without_shifts(proof)
    monkeypatch.setattr(alignment_check, "Z3_PATHS", 2)
    monkeypatch.setattr(alignment_check, "TRIALS", 0)
    assert alignment_check.check(program, fake) is None  # what sampling alone lets through
    problem = alignment.confirm(program, fake)
    assert problem is not None and "%" in problem and "output 1" in problem


@pytest.mark.slow
def test_confirm_rejects_a_tampered_proof_the_sampling_checker_accepts(monkeypatch):
    """The same at its real size: 300 paths and 308 nodes, so the checker's z3 sees 2 paths and its
    80 random runs (seed 0) never take the one path that releases x[0]."""
    from verifiers.prover import alignment_check

    monkeypatch.setattr(alignment, "_template", lambda program: None)  # a per-path proof, as above
    program = _released_on_one_path(300, 150)
    proof = alignment.attempt(program, None)
    fake = _without_shifts(proof)
    assert alignment_check.check(program, fake) is None
    assert alignment.confirm(program, fake) is not None


def test_confirm_refuses_foreign_shifts_and_delta():
    program = _program("svt1", n=3)
    proof = alignment.attempt(program, None)
    paths = [dict(p) for p in proof.evidence["paths"]]
    paths[0] = dict(paths[0], shifts={**paths[0]["shifts"], "0": {"const": "1", "d": {}}})  # node 0 is an input
    assert "no draw" in alignment.confirm(program, _tampered(proof, paths=paths))
    assert "delta" in alignment.confirm(program, dataclasses.replace(proof, delta=Fraction(-1)))


def test_a_comparison_of_a_noisy_value_with_itself_is_no_decision():
    """(1 + e) + 1/2 < 1 + e is false for every draw.  It used to be split like a decision whose
    outcome 1 has no path, so the checker (every outcome followed) rejected the synthesised proof.
    The output is x[1] + Laplace(2) < 0: the Laplace mechanism's threshold, 1/2-DP."""

    @mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=one_differ)
    def same_noise(x):
        e = laplace(2)
        never = (1 + e) + 0.5 < 1 + e
        return (x[1] + e < ite(never, x[0] + 0.5 * e - 1, 0),)

    program = same_noise.trace()
    proof = prove(program, rules=["alignment"])
    assert isinstance(proof, Proof) and proof.eps == Fraction(1, 2)
    assert alignment.confirm(program, proof) is None
