"""The streaming enumerator (JointLaw) against the plain product over all noise outcomes."""

from fractions import Fraction as F

import pytest

from samplers import catalogue
from verifiers.enumerate import distribution, distribution_naive

CASES = {"rr": dict(n=3), "kary_rr": dict(k=4, p="7/10"), "noisy_max_geom": dict(m=3),
         "noisy_max_geom_value": dict(m=3), "above_threshold_geom": dict(L=3), "svt_geom": dict(L=3)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_streaming_equals_naive(name):
    program = catalogue.get(name).trace(**CASES[name])
    for x in list(program.domain.points())[:: max(1, program.domain.count() // 5)]:
        d = distribution(program, x)
        assert d == distribution_naive(program, x) and sum(d.values()) == 1


def test_reference_values():
    d = distribution(catalogue.get("noisy_max_geom").trace(m=5), (0, 2, 2, 2, 2))
    assert d[1] == F(73, 1440) and all(d[i] == F(1367, 5760) for i in range(2, 6))
