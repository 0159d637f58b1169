"""Exact affine forms in continuous noise variables: ``sum_i a_i z_i + b``.

On one path of a program with continuous noise (see :mod:`verifiers.continuous.paths`), every
float value is an affine function of the noise variables with exact rational
coefficients (float parameters enter at their exact binary value).  A comparison of
two such values is a half-space; the region of noise space producing an output is an
intersection of half-spaces, which :mod:`verifiers.continuous.region` integrates.

A :class:`Form` is never constant: arithmetic that cancels every variable returns the
``Fraction`` constant instead, so "is this value random?" is ``isinstance(v, Form)``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Union

Scalar = Union[int, Fraction]


class Form:
    """``sum coeffs[v] * z_v + const`` with at least one non-zero coefficient."""

    __slots__ = ("coeffs", "const", "_hash")

    def __init__(self, coeffs: tuple[tuple[int, Fraction], ...], const: Fraction) -> None:
        self.coeffs = coeffs  # sorted by variable, no zero coefficient, never empty
        self.const = const
        self._hash: int | None = None

    @staticmethod
    def variable(v: int) -> "Form":
        return Form(((v, Fraction(1)),), Fraction(0))

    @property
    def variables(self) -> tuple[int, ...]:
        return tuple(v for v, _ in self.coeffs)

    def coeff(self, v: int) -> Fraction:
        for w, a in self.coeffs:
            if w == v:
                return a
        return Fraction(0)

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Form) and self.coeffs == other.coeffs
                                 and self.const == other.const)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.coeffs, self.const))
        return self._hash

    def __repr__(self) -> str:
        terms = " + ".join(f"{a}*z{v}" for v, a in self.coeffs)
        return f"Form({terms} + {self.const})"


Value = Union[int, Fraction, Form]


def _build(coeffs: dict[int, Fraction], const: Fraction) -> Value:
    items = tuple(sorted((v, a) for v, a in coeffs.items() if a != 0))
    return Form(items, const) if items else const


def add(a: Value, b: Value) -> Value:
    """``a + b`` (either may be a constant)."""
    if not isinstance(a, Form) and not isinstance(b, Form):
        return a + b
    if not isinstance(a, Form):
        a, b = b, a
    if not isinstance(b, Form):
        return Form(a.coeffs, a.const + b)
    coeffs = dict(a.coeffs)
    for v, c in b.coeffs:
        coeffs[v] = coeffs.get(v, Fraction(0)) + c
    return _build(coeffs, a.const + b.const)


def scale(a: Value, k: Scalar) -> Value:
    """``k * a`` for a constant ``k``."""
    if not isinstance(a, Form):
        return a * k
    if k == 0:
        return Fraction(0)
    return Form(tuple((v, c * k) for v, c in a.coeffs), a.const * k)


def neg(a: Value) -> Value:
    if not isinstance(a, Form):
        return -a
    return Form(tuple((v, -c) for v, c in a.coeffs), -a.const)


def sub(a: Value, b: Value) -> Value:
    return add(a, neg(b))
