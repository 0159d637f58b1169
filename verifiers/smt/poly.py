"""Exact multivariate polynomials with rational coefficients (no sympy).

Model entries with unknown parameters (a prior ``p``, a noise parameter left
symbolic) are polynomials in named parameters; the forward algorithm multiplies and
adds them exactly.  A :class:`Poly` whose value is constant is never built: every
operation returns a plain :class:`~fractions.Fraction` instead, so constant models
stay ordinary ``Fraction`` arithmetic and ``value == 0`` tests are exact.
"""

from __future__ import annotations

import ast
from fractions import Fraction
from typing import Any, Iterable, Mapping, Union

from samplers.errors import ParameterError
from samplers.lang.exact import exact

Monomial = tuple[tuple[str, int], ...]  # sorted (name, exponent > 0) pairs; () is the constant
Entry = Union[Fraction, "Poly"]


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    exps = dict(a)
    for v, e in b:
        exps[v] = exps.get(v, 0) + e
    return tuple(sorted(exps.items()))


def _make(terms: Mapping[Monomial, Fraction]) -> Entry:
    """A Poly, or a Fraction when only the constant term remains."""
    terms = {m: c for m, c in terms.items() if c}
    if not terms:
        return Fraction(0)
    if list(terms) == [()]:
        return terms[()]
    return Poly(terms)


def _terms(v: Any) -> dict[Monomial, Fraction]:
    if isinstance(v, Poly):
        return v.terms
    if isinstance(v, (int, Fraction)) and not isinstance(v, bool):
        return {(): Fraction(v)} if v else {}
    raise TypeError(f"not a polynomial or rational: {v!r}")


class Poly:
    """A non-constant polynomial: ``terms`` maps monomials to nonzero rational coefficients."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Mapping[Monomial, Fraction]) -> None:
        self.terms = dict(terms)
        self._hash: int | None = None

    @staticmethod
    def var(name: str) -> "Poly":
        return Poly({((name, 1),): Fraction(1)})

    @property
    def variables(self) -> set[str]:
        return {v for m in self.terms for v, _ in m}

    def __add__(self, o: Any) -> Entry:
        try:
            ot = _terms(o)
        except TypeError:
            return NotImplemented
        out = dict(self.terms)
        for m, c in ot.items():
            out[m] = out.get(m, Fraction(0)) + c
        return _make(out)

    __radd__ = __add__

    def __neg__(self) -> "Poly":
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, o: Any) -> Entry:
        try:
            ot = _terms(o)
        except TypeError:
            return NotImplemented
        return self + _make({m: -c for m, c in ot.items()})

    def __rsub__(self, o: Any) -> Entry:
        return (-self) + o

    def __mul__(self, o: Any) -> Entry:
        try:
            ot = _terms(o)
        except TypeError:
            return NotImplemented
        out: dict[Monomial, Fraction] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in ot.items():
                m = _mono_mul(m1, m2)
                out[m] = out.get(m, Fraction(0)) + c1 * c2
        return _make(out)

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> Entry:
        if isinstance(o, (int, Fraction)) and not isinstance(o, bool) and o != 0:
            return self * (1 / Fraction(o))
        return NotImplemented

    def __pow__(self, e: int) -> Entry:
        if not isinstance(e, int) or e < 0:
            return NotImplemented
        out: Entry = Fraction(1)
        for _ in range(e):
            out = out * self
        return out

    def __eq__(self, o: Any) -> bool:
        try:
            return self.terms == _terms(o)
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def __call__(self, values: Mapping[str, Any]) -> Entry:
        """Substitute rational (or polynomial) values for some of the variables."""
        out: Entry = Fraction(0)
        for m, c in self.terms.items():
            t: Entry = c
            for v, e in m:
                t = t * ((values[v] if v in values else Poly.var(v)) ** e)
            out = out + t
        return out

    def __str__(self) -> str:
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda mc: (-sum(e for _, e in mc[0]), mc[0])):
            mono = "*".join(v if e == 1 else f"{v}^{e}" for v, e in m)
            if not mono:
                parts.append(str(c))
            elif c == 1:
                parts.append(mono)
            elif c == -1:
                parts.append(f"-{mono}")
            else:
                parts.append(f"{c}*{mono}")
        return " + ".join(parts).replace("+ -", "- ")

    __repr__ = __str__


def variables(values: Iterable[Entry]) -> set[str]:
    """The parameter names that occur in any of ``values``."""
    out: set[str] = set()
    for v in values:
        if isinstance(v, Poly):
            out |= v.variables
    return out


def substitute(v: Entry, values: Mapping[str, Any]) -> Entry:
    """``v`` with the given parameters replaced by their values."""
    return v(values) if isinstance(v, Poly) else v


def to_z3(v: Entry, env: Mapping[str, Any]) -> Any:
    """``v`` as a z3 real term, parameters taken from ``env`` (name -> z3 Real)."""
    import z3

    def q(c: Fraction) -> Any:
        return z3.RealVal(f"{c.numerator}/{c.denominator}")

    if not isinstance(v, Poly):
        return q(Fraction(v))
    terms = []
    for m, c in v.terms.items():
        factors = [env[name] ** e if e > 1 else env[name] for name, e in m]
        terms.append(z3.Product([q(c)] + factors) if c != 1 else z3.Product(factors))
    return z3.Sum(terms)


class _Parser(ast.NodeVisitor):
    def __init__(self, params: set[str] | None, what: str) -> None:
        self.params, self.what = params, what

    def fail(self, why: str) -> ParameterError:
        return ParameterError(f"{self.what}: {why}")

    def visit_Expression(self, node: ast.Expression) -> Entry:
        return self.visit(node.body)

    def visit_Constant(self, node: ast.Constant) -> Entry:
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise self.fail(f"{node.value!r} is not a number")
        return Fraction(node.value)  # floats at their exact binary value

    def visit_Name(self, node: ast.Name) -> Entry:
        if self.params is not None and node.id not in self.params:
            known = ", ".join(sorted(self.params)) or "none declared"
            raise self.fail(f"unknown parameter {node.id!r} (parameters: {known})")
        return Poly.var(node.id)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Entry:
        v = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        raise self.fail("only + and - may prefix a term")

    def visit_BinOp(self, node: ast.BinOp) -> Entry:
        a, b = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            if isinstance(b, Poly) or b == 0:
                raise self.fail("division only by a nonzero number")
            return a / b if isinstance(a, Poly) else Fraction(a) / b
        if isinstance(node.op, ast.Pow):
            if isinstance(b, Poly) or b.denominator != 1 or b < 0 or b > 64:
                raise self.fail("exponents must be integers between 0 and 64")
            return a ** int(b)
        raise self.fail("only + - * / and ^ are allowed")

    def generic_visit(self, node: ast.AST) -> Entry:
        raise self.fail(f"unsupported syntax ({type(node).__name__})")


def parse_entry(text: Any, params: set[str] | None = None, *, what: str = "entry") -> Entry:
    """A rational or polynomial from text like ``"1/6"``, ``"(1-p)^2"``, ``"2*p*(1-p)"``.

    Numbers may also be given as ints or floats (floats at their exact binary value);
    names must be among ``params`` when it is given.
    """
    if isinstance(text, bool):
        raise ParameterError(f"{what}: expected a number or polynomial, got a boolean")
    if isinstance(text, (int, float, Fraction)):
        return exact(text, what=what)
    if not isinstance(text, str):
        raise ParameterError(f"{what}: expected a number or polynomial, got {text!r}")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError:
        raise ParameterError(f"{what}: {text!r} is not a polynomial expression") from None
    return _Parser(params, what).visit(tree)
