"""Exact polynomials: parsing, arithmetic, substitution, z3 terms."""

from fractions import Fraction as F

import pytest

from samplers.errors import ParameterError
from verifiers.smt.poly import Poly, parse_entry, substitute, to_z3, variables

z3 = pytest.importorskip("z3")


def test_constants_stay_fractions():
    p = Poly.var("p")
    assert parse_entry("1/6") == F(1, 6)
    assert parse_entry("0.5") == F(1, 2)
    assert isinstance(p - p, F) and p - p == 0
    assert (1 - p) + p == 1 and isinstance((1 - p) + p, F)


def test_arithmetic_and_parsing_agree():
    e = parse_entry("(1-p)^2 + 2*p*(1-p) + p**2", {"p"})
    assert e == 1
    q = parse_entry("2*p*(1-q)/3", {"p", "q"})
    assert variables([q]) == {"p", "q"}
    assert substitute(q, {"p": F(1, 2), "q": F(1, 4)}) == F(1, 4)
    assert substitute(q, {"p": F(3)}) == parse_entry("2 - 2*q", {"q"})
    assert parse_entry(str(q), {"p", "q"}) == q


@pytest.mark.parametrize("text", ["p/q", "p^q", "2^(1/2)", "p.x", "f(p)", "p ==1", "'a'", "p^-1"])
def test_rejects_non_polynomials(text):
    with pytest.raises(ParameterError):
        parse_entry(text, {"p", "q"})


def test_unknown_names_rejected():
    with pytest.raises(ParameterError, match="unknown parameter 'r'"):
        parse_entry("1 - r", {"p"})


def test_to_z3_is_exact():
    p = parse_entry("1/3 - p^2/7", {"p"})
    x = z3.Real("p")
    s = z3.Solver()
    s.add(x == z3.RealVal("1/2"), to_z3(p, {"p": x}) == z3.RealVal(str(substitute(p, {"p": F(1, 2)}))))
    assert s.check() == z3.sat
