"""Black-box adapters: callables and real DP libraries (tests of a library skip when it is absent)."""

import math

import numpy as np
import pytest

from hybrid.inputs import Pair
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


LEVELS = [  # (library mechanism, parameters, its true level: the library's own accounting, tight here, samples)
    ("opendp:randomized_response", {"k": "4", "p": "0.7"}, math.log(0.7 / (0.3 / 3)), 300_000),
    ("opendp:laplace", {"scale": "2"}, 0.5, 300_000),
    ("opendp:geometric", {"scale": "2"}, 0.5, 300_000),
    ("diffprivlib:laplace", {"epsilon": "0.5"}, 0.5, 300_000),
    ("diffprivlib:geometric", {"epsilon": "0.5"}, 0.5, 1_000_000),  # 300000 reach 0.42 only
    ("diffprivlib:binary", {"epsilon": "1"}, 1.0, 300_000),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, params, level, samples", LEVELS, ids=[n for n, *_ in LEVELS])
def test_estimate_reaches_the_true_level_and_never_passes_it(name, params, level, samples):
    pytest.importorskip("opendp" if name.startswith("opendp") else "diffprivlib.mechanisms")
    box = library_mechanism(name, params)
    assert box.claimed_eps == pytest.approx(level)
    res = sniper_estimate(box, samples=samples, seed=0)
    assert 0.9 * level <= res.eps_lower <= level
