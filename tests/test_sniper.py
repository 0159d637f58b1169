"""The DP-Sniper-style attack: thresholds, exported attacks, validity against exact eps."""

import json
import math

import numpy as np
import pytest

from hybrid.testers.attack import Attack
from hybrid.testers.event_json import event_from_json
from hybrid.inputs import Pair
from hybrid.testers.sniper import SniperTester, eps_bounds, thresholds
from hybrid.testers.transforms import fit_transform
from samplers import catalogue
from samplers.compile import compile_sampler
from verifiers.enumerate import Enumerator
from verifiers.ratio import log_ratio

SMALL = dict(n_train=20_000, n_threshold=20_000, n_check=20_000, n_final=100_000)


def test_threshold_rule_matches_dp_sniper():
    # DP-Sniper's tests/dpsniper/test_attack.py, with n = 7 so that target = c * 7
    probs = np.array([0.9, 0.8, 0.6, 0.6, 0.6, 0.6, 0.3])
    levels = thresholds(probs, [3.2 / 7, 3.0 / 7, 1.0 / 7], min_tail=1, interior=True)
    got = {round(c * 7, 6): (t, round(q, 6)) for c, t, q in levels}
    assert got[3.2] == (0.6, 0.3) and got[3.0] == (0.6, 0.25) and got[1.0] == (0.8, 0.0)
    # without interior levels only block boundaries remain (and they need no coin)
    assert all(q in (0.0, 1.0) for _, _, q in thresholds(probs, [3.2 / 7, 3.0 / 7], min_tail=1))


def test_eps_bounds():
    est, lcb = eps_bounds(500, 1000, 250, 1000, 0.05)
    assert est == pytest.approx(math.log(2)) and 0 < lcb < est
    assert eps_bounds(10, 100, 0, 100, 0.05)[0] == math.inf
    assert eps_bounds(0, 100, 5, 100, 0.05) == (0.0, 0.0)


def test_flags_transform_as_dp_sniper():
    # DP-Sniper's FlagsFeatureTransformer example: with code -1, [-3,-1,4] -> [-3,0,4, 0,1,0] (column-major here)
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(1000, 3))
    rows[rng.random((1000, 3)) < 0.2] = -1.0  # a special code with positive mass
    tf = fit_transform("flags", rows)
    x = tf(np.array([[-3.0, -1.0, 4.0]]))
    assert x.tolist() == [[-3.0, 0.0, 0.0, 1.0, 4.0, 0.0]]  # per column: value, flag of -1


def _exact_eps(program):
    e = Enumerator(program)
    best = 0.0
    for x, xp in program.neighbours.pairs(program.domain):
        best = max(best, log_ratio(e.pair_epsilon(x, xp)[0]))
    return best


DISCRETE = [("rr", {"n": 2}), ("kary_rr", {"k": 4, "p": "1/2"}), ("trunc_geom", {}), ("rr_count", {}),
            ("noisy_max_geom", {"m": 3}), ("histogram_geom", {"m": 2}),
            ("histogram_geom_wrong_scale", {"m": 2}), ("geo_sample", {}), ("above_threshold_geom", {"L": 2}),
            ("svt_geom", {"L": 2})]


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name,params", DISCRETE)
def test_lower_bound_never_exceeds_exact_eps(name, params, seed):
    """Validity: at confidence 0.9999 per run, the 10 mechanisms fail with probability <= 0.1% per seed."""
    program = catalogue.get(name).trace(**params)
    exact = _exact_eps(program)
    r = SniperTester(compile_sampler(program), confidence=0.9999, seed=seed, **SMALL).run()
    assert r.eps_lcb <= exact + 1e-12, (r.eps_lcb, exact)
    assert r.eps_lcb > 0.3 * min(exact, 3.0), (r.eps_lcb, r.pair, r.limits, r.timings)  # and it is not vacuous


def test_exported_attack_is_exact_data():
    s = compile_sampler(catalogue.get("noisy_max_geom"), m=3)
    r = SniperTester(s, seed=2, **SMALL).run()
    a = r.attack
    back = event_from_json(json.loads(json.dumps(a.to_json())))
    assert isinstance(back, Attack)
    outs = np.array([1, 2, 3])
    assert (back.scores(outs) == a.scores(outs)).all()
    # scoring one output alone gives the same float as in a batch: exact verifiers can rely on ties
    assert [a.scores(np.array([o]))[0] for o in outs] == a.scores(outs).tolist()
    # certify the attack exactly: P(S | x) = P(score > t) + q P(score == t)
    e = Enumerator(s.program)
    p = [e.event_probability(x, a) + a.q * e.event_probability(x, lambda o: a.ties(np.array([o]))[0])
         for x in (r.pair.x, r.pair.x_prime)]
    assert float(p[1]) == pytest.approx(a.c, rel=0.15)


@pytest.mark.slow
def test_float_attack_round_trip_and_mlp():
    s = compile_sampler(catalogue.get("svt3"))
    pairs = [Pair((1,) * 10, (2,) * 5 + (0,) * 5)]  # DP-Sniper's best SVT3 witness
    r = SniperTester(s, classifier="mlp", pairs=pairs, seed=1, **SMALL).run()
    back = event_from_json(json.loads(json.dumps(r.attack.to_json())))
    rows = s.sample(r.pair.x, 2000, 9)
    assert (back.scores(rows) == r.attack.scores(rows)).all()
    assert r.eps_lcb > 0


@pytest.mark.slow
def test_noisy_hist2_beats_the_ln_1_over_c_cap():
    s = compile_sampler(catalogue.get("noisy_hist2"))
    r = SniperTester(s, seed=0, n_train=50_000, n_threshold=1_000_000, n_check=1_000_000, n_final=2_000_000).run()
    assert r.eps_lcb > 5 > math.log(1 / 0.01) and r.attack.c < 0.01


def test_bonferroni_correction_and_bad_parameters():
    s = compile_sampler(catalogue.get("laplace"))
    r = SniperTester(s, correction="bonferroni", seed=0, **SMALL).run()
    assert 0 < r.eps_lcb < 0.1 + 1e-9
    from samplers.errors import ParameterError

    for bad in (dict(classifier="svm"), dict(correction="none"), dict(confidence=1.0), dict(c_grid=(0.5, 2.0)),
                dict(n_final=0)):
        with pytest.raises(ParameterError):
            SniperTester(s, **bad)
