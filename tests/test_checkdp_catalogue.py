"""CheckDP's summation benchmarks in the catalogue: claims as CheckDP checks them, certified levels.

The certified lower bounds reach the true levels written in the docstrings (partialsum
eps, smartsum 2 eps) and refute the buggy twins' claims (badpartialsum: 2 eps > eps;
badsmartsum: a noiseless release, infinite).
"""

from __future__ import annotations

import math

import pytest

from hybrid.searcher.budget import Budget
from hybrid.searcher.search import search
from samplers import catalogue
from samplers.errors import ParameterError

CHECKDP = {"partialsum": 0.1, "badpartialsum": 0.1, "smartsum": 0.2, "badsmartsum": 0.2}


def test_registered_with_their_claims():
    for name, claim in CHECKDP.items():
        mech = catalogue.get(name)
        assert mech.claimed_eps() == pytest.approx(claim) and mech.trace().continuous
    assert catalogue.get("smartsum").trace(n=6, T=4, M=3).arity == 5  # released steps 0..T
    with pytest.raises(ParameterError, match="CheckDP's assumptions"):
        catalogue.get("smartsum").params(M=1)


@pytest.mark.slow
@pytest.mark.parametrize("name, level, refuted", [
    ("partialsum", 0.1, False), ("badpartialsum", 0.2, True), ("smartsum", 0.2, False),
    ("badsmartsum", math.inf, True),
])
def test_certified_levels(name, level, refuted):
    r = search(catalogue.get(name), claimed_eps=CHECKDP[name], budget=Budget(samples=1_000_000))
    assert r.certified and r.refuted is refuted
    assert r.eps_lower <= level and (r.eps_lower == math.inf if level == math.inf else r.eps_lower > 0.99 * level)
