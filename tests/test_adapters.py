"""Black-box adapters: callables and real DP libraries (tests of a library skip when it is absent)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from hybrid.inputs import Pair
from hybrid.testers.binomial import cp_lower
from hybrid.testers.testing import sniper_estimate, statdp_test
from samplers.blackbox import BlackBoxError, PerCallBlackBox, VectorisedBlackBox
from samplers.errors import DomainError, ParameterError, UnknownMechanism
from samplers.lang.domain import Domain
from samplers.lang.ir import BOTTOM_CODE
from samplers.lang.neighbours import one_differ
from samplers.libraries import library_mechanism

D = Domain((0,), (10,))


def test_vectorised_and_per_call_conventions():
    vec = VectorisedBlackBox(lambda x, n, rng: x[0] + rng.laplace(0, 2, n), domain=D, neighbours=one_differ,
                             name="lap")
    a, b = vec.sample((3,), 1000, 7), vec.sample((3,), 1000, 7)
    assert a.dtype == np.float64 and a.shape == (1000,) and (a == b).all()
    per = PerCallBlackBox(lambda x, rng: (bool(rng.random() < 0.5), None), domain=D, neighbours=one_differ)
    out = per.sample((1,), 50, 0)
    assert out.dtype == np.int64 and out.shape == (50, 2) and (out[:, 1] == BOTTOM_CODE).all()
    with pytest.raises(DomainError):
        vec.sample((11,), 5, 0)
    with pytest.raises(BlackBoxError):
        VectorisedBlackBox(lambda x, n, rng: np.zeros(n + 1), domain=D, neighbours=one_differ).sample((1,), 3, 0)
    with pytest.raises(ParameterError):
        vec.sample((1,), -1, 0)


@pytest.mark.slow
def test_black_box_results_are_statistical():
    vec = VectorisedBlackBox(lambda x, n, rng: x[0] + rng.laplace(0, 2, n), domain=D, neighbours=one_differ,
                             name="lap", params={"scale": 2})
    res = sniper_estimate(vec, samples=200_000, seed=0).to_json()
    assert res["certified"] is False and res["ratio"] is None and res["mechanism"] == "lap"
    assert 0.3 < res["eps_lower"] <= 0.5 + 1e-9  # true eps = 1/2
    assert statdp_test(vec, 0.3, samples=100_000, seed=0).to_json()["violation"] is True


def test_unknown_library_mechanism_and_parameters():
    with pytest.raises(UnknownMechanism):
        library_mechanism("opendp:nope", {})
    with pytest.raises(ParameterError):
        library_mechanism("diffprivlib:binary", {"eps": "1"})


@pytest.mark.slow
def test_opendp_mechanisms():
    pytest.importorskip("opendp")
    rr = library_mechanism("opendp:randomized_response", {"k": "4", "p": "0.5"})
    assert rr.claimed_eps == pytest.approx(math.log(3))
    # OpenDP samples one output per call from the OS generator (about 0.3 ms): small budgets
    res = sniper_estimate(rr, samples=10_000, seed=0, pairs=[Pair((1,), (0,))], n_train=2_000,
                          n_threshold=5_000, n_check=5_000)
    assert 0.5 < res.eps_lower <= math.log(3) + 1e-9
    lap = library_mechanism("opendp:laplace", {"scale": "2"})
    assert statdp_test(lap, 0.2, samples=20_000, seed=1).extra["violation"] is True
    geo = library_mechanism("opendp:geometric", {"scale": "2"})
    assert geo.sample((3,), 10, 0).dtype == np.int64
    with pytest.raises(ParameterError):  # OpenDP validates p >= 1/k itself
        library_mechanism("opendp:randomized_response", {"k": "3", "p": "0.2"})


@pytest.mark.slow
def test_diffprivlib_mechanisms():
    pytest.importorskip("diffprivlib.mechanisms")
    binary = library_mechanism("diffprivlib:binary", {"epsilon": "1"})
    a, b = binary.sample((1,), 500, 3), binary.sample((1,), 500, 3)
    assert (a == b).all()  # seeded through random_state
    res = sniper_estimate(binary, samples=20_000, seed=0)
    assert 0.6 < res.eps_lower <= 1 + 1e-9
    lap = library_mechanism("diffprivlib:laplace", {"epsilon": "0.5"})
    assert statdp_test(lap, 0.3, samples=20_000, seed=0).extra["violation"] is True
    assert library_mechanism("diffprivlib:geometric", {}).sample((2,), 5, 0).dtype == np.int64


def test_diffprivlib_batches_only_what_its_code_computes_per_draw():
    """A batch is the library's per-call outputs exactly (checked per input), or the adapter draws per call."""
    mechs = pytest.importorskip("diffprivlib.mechanisms")
    from samplers.library_draws import batch_agrees

    assert batch_agrees(lambda s: mechs.Laplace(epsilon=0.5, sensitivity=1, random_state=s).randomise(3.0))
    assert batch_agrees(lambda s: mechs.GaussianAnalytic(epsilon=1, delta=1e-3, sensitivity=1,
                                                         random_state=s).randomise(3.0))
    assert not batch_agrees(lambda s: mechs.Geometric(epsilon=0.5, sensitivity=1, random_state=s).randomise(3))
    # n draws against n candidates broadcast without an error, and must still be refused
    assert not batch_agrees(lambda s: mechs.Exponential(epsilon=1, sensitivity=1, utility=[0.0] * 4,
                                                        random_state=s).randomise(), n=4)
    lap = library_mechanism("diffprivlib:laplace", {"epsilon": "0.5"})
    geo = library_mechanism("diffprivlib:geometric", {})
    assert not lap.parallel and geo.parallel
    assert (lap.sample((2,), 100_000, 5) == lap.sample((2,), 100_000, 5)).all()


def test_batch_check_refuses_a_branch_on_the_draws():
    from samplers.library_draws import batch_agrees

    def branchy(state):  # numpy arithmetic, but a different law per element than per call
        u = state.random()
        return np.where(u < 0.5, u, 1.0) if np.ndim(u) else (u if u < 0.25 else 1.0)

    assert batch_agrees(lambda state: 2.0 * state.random() - 1.0)
    assert not batch_agrees(branchy)
    assert not batch_agrees(lambda state: state.random() + state.uniform())  # a draw not batched: shared


def test_chunks_do_not_depend_on_the_workers(monkeypatch):
    """A seeded per-call adapter gives the same outputs whether its chunks ran over the cores or here."""
    pytest.importorskip("diffprivlib.mechanisms")
    import samplers.library_draws as draws

    box = library_mechanism("diffprivlib:binary", {"epsilon": "1"})
    assert box.parallel
    here = box.sample((1,), 3 * draws.CHUNK + 5, 11)
    monkeypatch.setattr(draws, "workers", lambda: 2)
    assert (box.sample((1,), 3 * draws.CHUNK + 5, 11) == here).all()


def test_workers_from_the_environment(monkeypatch):
    import samplers.library_draws as draws

    for text, want in (("1", 1), ("3", 3), ("0", None), ("two", None)):
        draws.workers.cache_clear()
        monkeypatch.setenv(draws.WORKERS_ENV, text)
        if want is None:
            with pytest.raises(ParameterError, match=draws.WORKERS_ENV):
                draws.workers()
        else:
            assert draws.workers() == want
    draws.workers.cache_clear()


def _exponential_level(eps: float, k: int) -> float:
    """The exponential mechanism's exact level on utilities {0,1}^k moving by 1 (all_differ), by brute force."""
    pts = list(itertools.product((0, 1), repeat=k))

    def law(u):
        w = [math.exp(eps / 2 * v) for v in u]  # diffprivlib's scale eps / (2 sensitivity)
        return [v / sum(w) for v in w]

    return max(abs(math.log(a / b)) for u in pts for v in pts for a, b in zip(law(u), law(v)))


LEVELS = [  # (library mechanism, parameters, its true level: the library's own accounting, tight here, samples)
    ("opendp:randomized_response", {"k": "4", "p": "0.7"}, math.log(0.7 / (0.3 / 3)), 300_000),
    ("opendp:laplace", {"scale": "2"}, 0.5, 300_000),
    ("opendp:geometric", {"scale": "2"}, 0.5, 300_000),
    # exponential noise on 2 scores: P(first wins) = 1/2 e^{-1/b} or 1 - 1/2 e^{-1/b}; OpenDP claims 2/b
    ("opendp:noisy_max", {"k": "2", "scale": "1"}, math.log(2 * math.e - 1), 300_000),
    ("diffprivlib:laplace", {"epsilon": "0.5"}, 0.5, 300_000),
    ("diffprivlib:geometric", {"epsilon": "0.5"}, 0.5, 1_000_000),  # 300000 reach 0.42 only
    ("diffprivlib:binary", {"epsilon": "1"}, 1.0, 300_000),
    # on {0,1}^3 the worst pair is e_i against 1 - e_i: below the claimed 1, which large k approach
    ("diffprivlib:exponential", {"epsilon": "1", "k": "3"}, _exponential_level(1.0, 3), 300_000),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, params, level, samples", LEVELS, ids=[n for n, *_ in LEVELS])
def test_estimate_reaches_the_true_level_and_never_passes_it(name, params, level, samples):
    pytest.importorskip("opendp" if name.startswith("opendp") else "diffprivlib.mechanisms")
    box = library_mechanism(name, params)
    assert box.claimed_eps >= level - 1e-12
    if name not in ("opendp:noisy_max", "diffprivlib:exponential"):
        assert box.claimed_eps == pytest.approx(level)
    res = sniper_estimate(box, samples=samples, seed=0)
    assert 0.9 * level <= res.eps_lower <= level


def gaussian_level(mu: float, q: float) -> float:
    """The largest ln(P(E | x) / P(E | x')) over events E with P(E | x') = q, for N(mu, 1) against N(0, 1).

    By Neyman and Pearson the best such event is the upper tail of mass q under x'; this is
    the Gaussian's tradeoff curve, the same law as the analytic Gaussian's (eps, delta(eps)) curve.
    """
    return math.log(norm.sf(norm.isf(q) - mu) / q)


def analytic_delta(mu: float, eps: float) -> float:
    """delta(eps) of the Gaussian mechanism with sensitivity / sigma = mu (Balle and Wang 2018, Thm 8)."""
    return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


GAUSSIANS = [  # (library mechanism, parameters, samples)
    ("opendp:gaussian", {"scale": "1"}, 300_000),
    # the classic calibration is loose (mu = 0.32): the curve is low where counts resolve it, and
    # 300000 draws leave about 10% Clopper-Pearson slack; batched draws make 10^6 cheap
    ("diffprivlib:gaussian", {"epsilon": "1", "delta": "0.01"}, 1_000_000),
    ("diffprivlib:gaussian_analytic", {"epsilon": "2", "delta": "0.01"}, 300_000),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, params, samples", GAUSSIANS, ids=[n for n, *_ in GAUSSIANS])
def test_gaussian_estimate_stays_under_the_analytic_curve(name, params, samples):
    """A Gaussian is not pure DP: an event of mass q under x' allows at most gaussian_level(mu, q).

    The true level of the estimate's own event is that curve at its mass (bounded below by
    Clopper-Pearson on the final counts, so the check is sound); the estimate must stay under
    it and reach 90% of it at the observed mass.  The law's mu must also meet the library's
    (eps, delta) or rho claim on the analytic curve.
    """
    pytest.importorskip("opendp" if name.startswith("opendp") else "diffprivlib.mechanisms")
    box = library_mechanism(name, params)
    mu = box.gaussian_mu
    if name.startswith("opendp"):
        assert mu == pytest.approx(math.sqrt(2 * box.claimed_rho))
    else:
        assert analytic_delta(mu, box.claimed_eps) <= box.claimed_delta * (1 + 1e-9)
    res = sniper_estimate(box, samples=samples, seed=0)
    (k1, n1), (k2, n2) = res.extra["counts"]["x"], res.extra["counts"]["x_prime"]
    q_lo = float(cp_lower(k2, n2, 1e-4))
    assert res.eps_lower <= gaussian_level(mu, q_lo)
    # tightness: 90% of the curve at the observed mass; OpenDP draws are unseeded (its own RNG),
    # so its runs vary and 2.94 against 0.9 x 3.29 was seen: 85% there, 90% for the seeded ones
    tight = 0.85 if name.startswith("opendp") else 0.9
    assert res.eps_lower >= tight * gaussian_level(mu, k2 / n2)
