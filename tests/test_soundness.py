"""Regression tests for the soundness defects of issue 13: no certificate may be too large.

Each test is one of the audit's reproducers; the class of bug each belongs to is covered
more broadly by ``test_random_programs.py`` (random programs against an independent
enumerator) and ``test_epsilon_brackets.py`` (brackets at every scale).
"""

import json
import math
import pickle
from fractions import Fraction

import pytest

from hybrid import Budget, search
from hybrid.cli import main
from hybrid.formats import lower_str, output_from_json, output_to_json, upper_str
from samplers import catalogue
from samplers.errors import DPHybridError, LanguageError
from samplers.lang import (BOTTOM, all_differ, argmax, clamp, custom, flip, ints, ite, mechanism, replace_one,
                           two_sided_geometric, uniform)
from samplers.lang.ir import BOTTOM_CODE
from verifiers.backends import get_backend
from verifiers.epsilon import exceeds_exp, within_exp
from verifiers.ratio import INF

BACKENDS = ("enumerate", "bdd", "smt")
QUARTER = {(a, b): Fraction(1, 4) for a in (0, 1) for b in (0, 1)}


@mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=replace_one)
def two_ties(x):
    a = argmax([1, 1], ties="uniform")
    b = argmax([1, 1], ties="uniform")
    f1, f2 = flip("1/2"), flip("1/2")
    return (ite(x[0] == 0, f1, a), ite(x[0] == 0, f2, b))


@mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=replace_one)
def per_client_tiebreak(x):
    return tuple(ite(flip("1/2"), argmax([xi, 1], ties="uniform"), flip("1/2")) for xi in x)


@mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=replace_one)
def swapped(x):
    return (x[1], x[0])


@mechanism(domain=ints(lo=0, hi=1, size=2), neighbours=replace_one)
def swapped_rr(x):
    return (x[1] ^ flip("1/4"), x[0])


# -- 1. every uniform tie-break is its own draw ---------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_two_equal_tie_breaks_are_independent(backend):
    be = get_backend(two_ties.trace(), backend)
    assert be.distribution([1]) == QUARTER and be.distribution([0]) == QUARTER
    assert be.global_epsilon().ratio == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_tie_breaks_equal_once_the_input_is_fixed_stay_independent(backend):
    be = get_backend(per_client_tiebreak.trace(), backend)
    assert be.distribution([1, 1]) == QUARTER
    assert be.global_epsilon().ratio == 2


def test_search_does_not_refute_a_true_claim_on_tie_breaks():
    r = search(per_client_tiebreak, claimed_eps=math.log(2) + 1e-9, budget=Budget(samples=200_000))
    assert r.certified and r.ratio == 2 and r.refuted is False
    r = search(two_ties, budget=Budget(samples=200_000))
    assert r.ratio == 1 and r.eps_lower == 0


# -- 3. the bracket is always the reported witness's ------------------------------------------
@pytest.mark.parametrize("name, params", [("noisy_max_geom", {"m": 3, "tie": "first"}),
                                          ("svt_geom", {"L": 3}), ("isvt3_geom", {"L": 3})])
def test_bracket_describes_the_reported_witness(name, params):
    r = search(name, params, budget=Budget(explore=0, local_steps=0, samples=400_000))
    lo, hi = r.bracket
    assert lo <= r.eps_lower <= hi and lo <= math.log(r.ratio) <= hi
    w = r.witness
    exact = get_backend(catalogue.get(name).trace(**params), "enumerate")
    assert exact.pair_ratio(w["x"], w["x_prime"]) == r.ratio  # the witness pair's own level


# -- 4. global sweeps rest on no declared symmetry --------------------------------------------------
@pytest.mark.parametrize("backend", ("enumerate", "bdd"))
def test_a_global_sweep_visits_every_ordered_pair(backend):
    """Only the first coordinate matters, so the worst pairs differ there and need not be sorted; the
    sweep visits every ordered all_differ pair of {0..2}^2 and finds the truncated geometric's exact
    level 1/a = 2.  By hand: a coordinate v has 2, 3, 2 values within 1 for v = 0, 1, 2, so there are
    (2 + 3 + 2)^2 - 9 = 40 ordered pairs (the 9 equal ones left out)."""
    @mechanism(domain=ints(lo=0, hi=2, size=2), neighbours=all_differ)
    def first_only(x):
        return clamp(x[0] + two_sided_geometric("1/2"), 0, 2)

    program = first_only.trace()
    g = get_backend(program, backend).global_epsilon()
    pairs = sum(1 for x in program.domain.points() for _ in program.neighbours.of(x, program.domain))
    assert g.ratio == 2 and g.pairs == pairs == 40


# -- 5. crashes that must be answers ----------------------------------------------------------------
@pytest.mark.parametrize("mech", [swapped, swapped_rr])
def test_smt_carries_inputs_used_after_an_earlier_output(mech):
    prog = mech.trace()
    ref = get_backend(prog, "enumerate")
    smt = get_backend(prog, "smt")
    for x in prog.domain.points():
        assert smt.distribution(x) == ref.distribution(x)
    assert smt.global_epsilon().ratio == ref.global_epsilon().ratio == math.inf


def test_bdd_event_with_an_output_of_the_wrong_shape_weighs_nothing(cat):
    prog = cat.get("rr").trace(n=2, lam="1/4")
    bdd, ref = get_backend(prog, "bdd"), get_backend(prog, "enumerate")
    event = [5, (0, 0), [0, 0]]
    assert bdd.event_probability([0, 0], event) == ref.event_probability([0, 0], event) == Fraction(9, 16)


def test_huge_eps_is_a_question_with_an_answer(tmp_path, capsys):
    assert within_exp(Fraction(10**6), 1e7) and not exceeds_exp(Fraction(10**6), 1e7)
    assert exceeds_exp(math.inf, 1e7) and within_exp(math.inf, math.inf)
    assert main(["verify", "trunc_geom", "--eps", "1e7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["proved_dp"] is True
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"mechanism": "rr", "params": {"n": 2}, "x": [0, 0], "x_prime": [1, 0],
                             "event": [[0, 0]]}))
    assert main(["certify", str(w), "--eps", "1e7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["violation_holds"] is False


# -- 6. only the string "bottom" is bottom ----------------------------------------------------------
def test_bottom_is_no_integer():
    assert BOTTOM != BOTTOM_CODE and BOTTOM_CODE != BOTTOM and not BOTTOM == BOTTOM_CODE
    assert {BOTTOM: 1}.get(BOTTOM_CODE) is None
    assert pickle.loads(pickle.dumps(BOTTOM)) is BOTTOM
    assert sorted([3, BOTTOM, -5]) == [BOTTOM, -5, 3]
    assert sorted([(1, 2), (1, BOTTOM)]) == [(1, BOTTOM), (1, 2)]
    assert output_to_json((1, BOTTOM)) == [1, "bottom"] and output_from_json([1, "bottom"]) == (1, BOTTOM)


def test_json_integer_min_int64_is_not_bottom(tmp_path, capsys):
    with pytest.raises(DPHybridError, match="bottom"):
        output_from_json([1, BOTTOM_CODE])
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"mechanism": "above_threshold_geom", "params": {}, "x": [0, 1],
                             "x_prime": [1, 0], "event": [[1, BOTTOM_CODE]]}))
    assert main(["certify", str(w)]) == 2
    assert "bottom" in capsys.readouterr().err


def test_program_values_stay_inside_int64():
    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=replace_one)
    def huge(x):
        return x[0] * 2**62 + flip("1/2") * 2**62

    with pytest.raises(LanguageError, match="int64"):
        huge.trace()


# -- 7. printed bounds are rounded in the sound direction --------------------------------------------
def test_printed_bounds_round_outwards():
    assert lower_str(math.log(8)) == "2.079441" and upper_str(math.log(8)) == "2.079442"
    assert upper_str(1.3725010389875545) == "1.372502" and lower_str(1.3725010389875545) == "1.372501"
    assert lower_str(math.inf) == "inf" and lower_str(0.0) == "0.000000" and lower_str(2.5, 2) == "2.50"


def test_search_prints_a_rounded_down_lower_bound(capsys):
    assert main(["search", "noisy_max_geom_value", "-p", "m=3", "--samples", "200000"]) == 0
    out = capsys.readouterr().out
    assert "eps >= 2.079441" in out and "2.079442" not in out.split("best pair")[0]


@mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=custom(lambda a, b: b[0] == a[0] - 1, "down"))
def one_way(x):
    return ite(x[0] == 1, flip("1/10"), flip("1/2"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_one_way_custom_predicate_is_compared_both_ways(backend):
    """x = 0 and x = 1 are neighbours whichever way the predicate is written: the worse
    direction P(1|0) / P(1|1) = (1/2) / (1/10) = 5 (by hand) bounds the level.  Only the
    predicate's own direction (level 9/5) was swept, and 1-DP was proved (e^1 < 5)."""
    from verifiers.verify import verify

    assert one_way.trace().neighbours.contains((0,), (1,))
    v = verify(one_way.trace(), backend=backend, eps=1.0)
    assert v.result.ratio == 5 and v.proved_dp is False


@pytest.mark.parametrize("mech, params, x, xp, event", [
    ("trunc_geom", {"m": 2, "a": "1/2"}, [0], [1], {"feature": {"kind": "identity"}, "in": [0.5]}),
    ("above_threshold_geom", {"L": 2}, [1, 1], [2, 2], {"feature": {"kind": "component", "index": 0}, "in": [0.5]}),
    ("above_threshold_geom", {"L": 2}, [1, 1], [2, 2], {"feature": {"kind": "identity"}, "in": [[0, 0.5]]}),
])
def test_a_set_event_of_non_integers_is_empty_on_integer_outputs(mech, params, x, xp, event):
    """Integer outputs never equal 0.5, so the event is empty and its ratio 0/0 (by hand).
    The value was cast to an integer (0.5 -> 0): "output in {0.5}" was certified with
    ratio 2 and a violation of 0.5-DP on trunc_geom."""
    from hybrid.searcher.certify import certify, parse_witnesses

    w, = parse_witnesses({"mechanism": mech, "params": params, "x": x, "x_prime": xp, "event": event,
                          "claimed_eps": 0.5})
    c = certify(w)
    assert (c.p_x, c.p_x_prime, c.violation_holds) == (0, 0, False)


@pytest.mark.parametrize("feature", [{"kind": "hamming", "reference": [0.5, 0]}, {"kind": "component", "index": 0.5},
                                     {"kind": "count", "value": [1, 0]}])
def test_a_feature_with_a_fractional_integer_field_is_refused(feature):
    """``int()`` truncated these to [0, 0] and index 0: the certificate weighed another event
    than the one its witness states (the Hamming distance to [0.5, 0] is at least 1 on
    integer outputs, so "distance < 1" is empty, yet it was certified non-empty).  A count
    of a list compared it column by column (the count of [1, 0] in (1, 0) was 2)."""
    from hybrid.searcher.certify import WitnessFileError, parse_witnesses

    with pytest.raises(WitnessFileError):
        parse_witnesses({"mechanism": "above_threshold_geom", "params": {"L": 2}, "x": [1, 1], "x_prime": [2, 2],
                         "event": {"feature": feature, "below": 1}})


def test_a_certificate_claims_no_upper_bound_on_eps():
    """One event's ratio bounds eps from below only: trunc_geom's event {1} has ratio
    P(1|0)/P(1|1) = (1/6)/(1/3) = 1/2 (by hand), while the level is 2.  Its certificate
    said eps_upper = 0, a key the contract reserves for complete sweeps."""
    from hybrid.searcher.certify import certify, parse_witnesses

    w, = parse_witnesses({"mechanism": "trunc_geom", "params": {"m": 2, "a": "1/2"}, "x": [0], "x_prime": [1],
                          "event": [1]})
    d = certify(w).to_json()
    assert d["ratio"] == "1/2" and "eps_upper" not in d and d["eps_lower"] == 0.0


@mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=replace_one)
def beyond_2_53(x):
    return 2**53 + uniform(0, 3) + x[0]


def test_a_threshold_on_integers_beyond_2_53_is_exact():
    """``output < 2^53 + 4``: all four outputs of x = 0 and three of x = 1 (by hand), ratio
    4/3.  As floats, 2^53 + 3 rounds to 2^53 + 4 and 2^53 + 1 to 2^53: ratio 3/2 was
    certified."""
    from hybrid.testers.events import Threshold
    from hybrid.testers.features import IDENTITY

    event = Threshold(IDENTITY, float(2**53 + 4), below=True)
    for backend in BACKENDS:
        assert get_backend(beyond_2_53.trace(), backend).witness_ratio((0,), (1,), event) == Fraction(4, 3)
    at_least = Threshold(IDENTITY, float(2**53 + 4), below=False)
    assert get_backend(beyond_2_53.trace(), "enumerate").witness_ratio((1,), (0,), at_least) == INF


def test_count_and_set_features_compare_integers_exactly():
    """numpy compares an int64 array with 2.0**53 in floats, where 2^53 + 1 equals it; and
    a cast turns 0.5 into 0.  Counts and memberships by hand."""
    import numpy as np

    from hybrid.testers.events import SetEvent
    from hybrid.testers.features import IDENTITY, Feature

    rows = np.array([[2**53 + 1, 2**53], [0, 1]])
    assert Feature("count", value=float(2**53))(rows).tolist() == [1, 0]
    assert Feature("count", value=0.5)(rows).tolist() == [0, 0]
    assert SetEvent(Feature("component", index=0), (float(2**53),)).mask(rows).tolist() == [False, False]
    assert SetEvent(IDENTITY, ((0, 1.0), (2**53 + 1, 0.5))).mask(rows).tolist() == [False, True]


def _clamped_geometric(c: int, a: Fraction, n: int) -> dict[int, Fraction]:
    """P(clamp(c + Z, 0, n) = k) for P(Z = z) = (1-a)/(1+a) a^|z|, 0 <= c <= n (by hand)."""
    law = {k: (1 - a) / (1 + a) * a ** abs(k - c) for k in range(1, n)}
    law[0], law[n] = a**c / (1 + a), a ** (n - c) / (1 + a)
    return law


def test_min_of_numeric_entries_skips_bottom_in_integer_outputs():
    """above_threshold_geom (L=2) outputs (0, 0), (0, 1) or (1, ⊥): the min of the numeric
    entries is below 1 exactly when the first answer is 0.  In integer samples the bottom
    code -2^63 was taken for a number, so (1, ⊥) counted too and the event had probability 1."""
    from hybrid.testers.events import Threshold
    from hybrid.testers.features import Feature

    n, T, a1, a2 = 2, 1, Fraction(1, 4), Fraction(1, 2)

    def first_below(q: int) -> Fraction:  # P(clamp(q + Z2) < clamp(T + Z1)), by enumeration
        t_law, y_law = _clamped_geometric(T, a1, n), _clamped_geometric(q, a2, n)
        return sum((pt * py for t, pt in t_law.items() for y, py in y_law.items() if y < t), Fraction(0))

    b = get_backend(catalogue.get("above_threshold_geom").trace(L=2), "enumerate")
    event = Threshold(Feature("min"), 1.0, below=True)
    for x in ((1, 1), (2, 2), (0, 2)):
        assert b.event_probability(x, event) == first_below(x[0])


def test_a_threshold_no_double_holds_is_refused():
    """JSON ``"below": 9007199254740993`` read as a float is 2^53: on integer outputs the event
    would no longer hold on the output 2^53: rather than weigh another event, the file is refused."""
    from hybrid.testers.event_json import event_from_json
    from hybrid.testers.features import MalformedEvent

    assert event_from_json({"feature": {"kind": "identity"}, "below": 2**53}).alpha == 2.0**53
    with pytest.raises(MalformedEvent):
        event_from_json({"feature": {"kind": "identity"}, "below": 2**53 + 1})


def test_an_attack_weighs_outputs_with_bottom():
    """The attack scores v0 + b1 (first value, second entry's bottom flag): it exceeds 0.5
    exactly on (1, ⊥), the first answer above the threshold (brute force above).  Weighing
    it failed on the bottom object instead of its int64 code, as samples carry it."""
    import numpy as np

    from hybrid.searcher.certify import Witness, certify
    from hybrid.testers.attack import Attack, Model
    from hybrid.testers.transforms import Column, Transform

    mech = catalogue.get("above_threshold_geom")
    cols = (Column("numeric", bottom=True), Column("numeric", bottom=True))  # features v0, b0, v1, b1
    model = Model("logistic", np.zeros(4), np.ones(4), (np.array([[1.0], [0.0], [0.0], [1.0]]),), (np.array([0.0]),))
    attack = Attack((1, 1), (2, 2), Transform("values", columns=cols), model, 0.5, 0.0, 1.0)
    c = certify(Witness(mech, mech.params(L=2), (1, 1), (2, 2), attack, attack.to_json()))
    n, T, a1, a2 = 2, 1, Fraction(1, 4), Fraction(1, 2)

    def first_above(q: int) -> Fraction:
        t_law, y_law = _clamped_geometric(T, a1, n), _clamped_geometric(q, a2, n)
        return sum((pt * py for t, pt in t_law.items() for y, py in y_law.items() if y >= t), Fraction(0))

    assert (c.p_x, c.p_x_prime) == (first_above(1), first_above(2))


def test_printed_bounds_of_any_size():
    """Quantizing in the default decimal context (28 digits) raised InvalidOperation from 1e22 on."""
    assert upper_str(1e22) == "10000000000000000000000.000000"
    assert lower_str(2.0**100) == f"{2**100}.000000"


def test_a_linear_threshold_on_integer_outputs_is_exact():
    """0.1 o1 + 0.2 o2 (exact doubles) is at most 0.1 + 0.2 = 0.3000000000000000166... <
    0.30000000000000004 on every output of rr (n = 2), so the event holds surely: ratio 1
    (by hand).  Summed in float64 the output (1, 1) scores 0.30000000000000004 and fell
    out: ratio (13/16) / (7/16) = 13/7 was certified."""
    from hybrid.searcher.certify import certify, parse_witnesses

    assert Fraction(0.1) + Fraction(0.2) < Fraction(0.30000000000000004)
    w, = parse_witnesses({"mechanism": "rr", "params": {"n": 2}, "x": [0, 1], "x_prime": [1, 1],
                          "event": {"feature": {"kind": "linear", "weights": [0.1, 0.2]},
                                    "below": 0.30000000000000004}})
    c = certify(w)
    assert (c.p_x, c.p_x_prime) == (1, 1)
    both = parse_witnesses({"mechanism": "rr", "params": {"n": 2}, "x": [0, 1], "x_prime": [1, 1],
                            "event": {"all": [{"feature": {"kind": "component", "index": 0}, "below": 2},
                                              {"feature": {"kind": "linear", "weights": [0.1, 0.2]},
                                               "below": 0.30000000000000004}]}})[0]
    assert certify(both).ratio == 1
