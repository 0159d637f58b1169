"""The surface of the mechanism language: symbolic values and the noise primitives.

A mechanism is a plain Python function over symbolic values (:class:`Sym`).  Calling it
once under :func:`tracing` records every operation into a :class:`Builder`; Python
``for`` loops simply unroll.  Symbolic values refuse to be used as Python booleans
(``if``/``while``/``and``): a branch on random data must be an :func:`ite`.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from fractions import Fraction
from typing import Any, Sequence

from samplers.errors import LanguageError
from samplers.lang import noise
from samplers.lang.builder import Builder
from samplers.lang.exact import Rational
from samplers.lang.float64 import is_power_of_two
from samplers.lang.ir import BOTTOM, FLOAT, Node
from samplers.scoped import scoped

_state = threading.local()


def _builder() -> Builder:
    b = getattr(_state, "builder", None)
    if b is None:
        raise LanguageError("mechanism-language operations can only be used while tracing a mechanism")
    return b


def tracing(builder: Builder) -> AbstractContextManager[Builder]:
    """Make ``builder`` the target of language operations for the duration."""
    return scoped(_state, "builder", builder)


class Sym:
    """A symbolic value of a program being traced (an IR node id)."""

    __slots__ = ("id",)
    __array_priority__ = 1000  # numpy scalars defer to Sym's reflected operators

    def __init__(self, node_id: int) -> None:
        self.id = node_id

    @property
    def node(self) -> Node:
        return _builder().nodes[self.id]

    @property
    def lo(self) -> Any:
        return self.node.lo

    @property
    def hi(self) -> Any:
        return self.node.hi

    def __repr__(self) -> str:
        n = self.node
        return f"Sym(%{self.id} {n.op}: {n.kind}[{n.lo}, {n.hi}])"

    def __bool__(self) -> bool:
        raise LanguageError(
            "a symbolic value cannot be used as a Python bool (if/while/and/or/not); "
            "use ite(cond, a, b), &, |, ~ instead"
        )

    def __index__(self) -> int:
        raise LanguageError("a symbolic value cannot be used as a Python index or int")

    __int__ = __index__

    def __float__(self) -> float:
        raise LanguageError("a symbolic value cannot be converted to a Python float")

    __hash__ = object.__hash__

    # arithmetic
    def __add__(self, o: Any) -> "Sym":
        return _op("add", self, o)

    def __radd__(self, o: Any) -> "Sym":
        return _op("add", o, self)

    def __sub__(self, o: Any) -> "Sym":
        return _op("sub", self, o)

    def __rsub__(self, o: Any) -> "Sym":
        return _op("sub", o, self)

    def __mul__(self, o: Any) -> "Sym":
        return _op("mul", self, o)

    def __rmul__(self, o: Any) -> "Sym":
        return _op("mul", o, self)

    def __neg__(self) -> "Sym":
        return _op("neg", self)

    def __pos__(self) -> "Sym":
        return self

    def __abs__(self) -> "Sym":
        return _op("abs", self)

    def __floordiv__(self, d: Any) -> "Sym":
        return Sym(_builder().emit("floordiv", (self.id,), _int_constant(d, "//")))

    def __mod__(self, d: Any) -> "Sym":
        return Sym(_builder().emit("mod", (self.id,), _int_constant(d, "%")))

    def __truediv__(self, o: Any) -> "Sym":
        """Division by a power of two (multiplication by its exact inverse); any other divisor rounds."""
        d = o.item() if hasattr(o, "item") and callable(o.item) else o
        if isinstance(d, Fraction) and d.denominator == 1:
            d = int(d)
        if is_power_of_two(d):
            return _op("mul", self, 1 / float(d))
        raise LanguageError(f"'/' by {d!r}: only division by a power of two is exact in float64 (an average of "
                            "n values: multiply by 1 / n yourself, knowing it rounds; integer division: //)")

    def __rtruediv__(self, o: Any) -> "Sym":
        raise LanguageError("'/' by a program value is not defined (only division by a constant power of two)")

    # comparisons (results are 0/1 values)
    def __lt__(self, o: Any) -> "Sym":
        return _op("lt", self, o)

    def __le__(self, o: Any) -> "Sym":
        return _op("le", self, o)

    def __gt__(self, o: Any) -> "Sym":
        return _op("lt", o, self)

    def __ge__(self, o: Any) -> "Sym":
        return _op("le", o, self)

    def __eq__(self, o: Any) -> "Sym":  # type: ignore[override]
        return _op("eq", self, o)

    def __ne__(self, o: Any) -> "Sym":  # type: ignore[override]
        return _op("ne", self, o)

    # boolean logic on 0/1 values
    def __and__(self, o: Any) -> "Sym":
        return _op("and", self, o)

    __rand__ = __and__

    def __or__(self, o: Any) -> "Sym":
        return _op("or", self, o)

    __ror__ = __or__

    def __xor__(self, o: Any) -> "Sym":
        return _op("xor", self, o)

    __rxor__ = __xor__

    def __invert__(self) -> "Sym":
        return _op("not", self)


Value = Sym | int | float | Fraction | bool


def _int_constant(d: Any, what: str) -> int:
    if isinstance(d, Fraction) and d.denominator == 1:
        d = int(d)
    if not isinstance(d, int) or isinstance(d, bool):
        raise LanguageError(f"'{what}' needs an integer constant on the right, got {d!r}")
    return d


def lift(v: Any, float_context: bool = False) -> int:
    """The node id of a program value, making constants of Python numbers."""
    if isinstance(v, Sym):
        return v.id
    b = _builder()
    if v is BOTTOM:
        return b.const(BOTTOM)
    if isinstance(v, Fraction):
        if v.denominator == 1:
            return b.const(int(v))
        if not float_context:
            raise LanguageError(
                f"the rational {v} cannot enter integer arithmetic; programs compute on integers"
            )
        return b.const(float(v))
    if isinstance(v, (bool, int, float)):
        return b.const(v)
    if hasattr(v, "item") and callable(v.item):  # numpy scalar
        return lift(v.item(), float_context)
    if hasattr(v, "program_value"):  # a front end's value that knows how it becomes one (or why not)
        return lift(v.program_value(), float_context)
    raise LanguageError(f"cannot use {v!r} (a {type(v).__name__}) as a program value")


def _op(op: str, *vals: Any, attr: Any = None) -> Sym:
    b = _builder()
    float_context = any(isinstance(v, float) or (isinstance(v, Sym) and v.node.kind == FLOAT) for v in vals)
    args = [lift(v, float_context) for v in vals]
    return Sym(b.emit(op, args, attr))


# -- noise primitives -------------------------------------------------------------------
def flip(p: Rational) -> Sym:
    """1 with probability ``p`` (an exact rational), else 0."""
    return Sym(_builder().draw(*noise.bernoulli_law(p)))


def categorical(weights: Sequence[Rational]) -> Sym:
    """A value in ``0..k-1`` drawn with probabilities proportional to ``weights``."""
    return Sym(_builder().draw(*noise.categorical_law(weights)))


def uniform(lo: int, hi: int) -> Sym:
    """A uniformly random integer in ``lo..hi`` inclusive."""
    return Sym(_builder().draw(*noise.uniform_law(lo, hi)))


def two_sided_geometric(a: Rational) -> Sym:
    """Two-sided geometric noise ``P(Z=z) = (1-a)/(1+a) a^|z|`` (0 <= a < 1).

    Its support is unbounded: use it as ``clamp(x + two_sided_geometric(a), lo, hi)``,
    the truncated geometric mechanism of Ghosh et al. (exact masses at the ends).
    """
    return Sym(_builder().geometric(noise.geometric_base(a)))


def discrete_laplace(a: Rational, bound: int) -> Sym:
    """Bounded discrete Laplace: ``P(Z=z)`` proportional to ``a^|z|`` on ``-bound..bound``."""
    return Sym(_builder().draw(*noise.discrete_laplace_law(a, bound)))


def laplace(scale: Rational) -> Sym:
    """Continuous Laplace noise with the given scale (sampling backends only)."""
    return Sym(_builder().continuous("laplace", noise.positive_scale(scale, "laplace")))


def exponential(scale: Rational) -> Sym:
    """Continuous exponential noise with the given scale (mean); sampling backends only."""
    return Sym(_builder().continuous("exponential", noise.positive_scale(scale, "exponential")))


def gaussian(sigma: Rational) -> Sym:
    """Continuous centred Gaussian noise with standard deviation ``sigma``; sampling only."""
    return Sym(_builder().continuous("gaussian", noise.positive_scale(sigma, "gaussian")))


# -- combinators ------------------------------------------------------------------------
def ite(cond: Value, then: Any, otherwise: Any) -> Sym:
    """``then`` if ``cond`` (a 0/1 value) else ``otherwise``; either may be BOTTOM."""
    return _op("ite", cond, then, otherwise)


def minimum(*vals: Value) -> Sym:
    """The smallest of the values."""
    return _fold("min", vals)


def maximum(*vals: Value) -> Sym:
    """The largest of the values."""
    return _fold("max", vals)


def _fold(op: str, vals: Sequence[Value]) -> Sym:
    if len(vals) == 1 and hasattr(vals[0], "symbolic_reduce"):  # a loop's outputs, traced symbolically
        return vals[0].symbolic_reduce(op, None)
    if len(vals) == 1 and isinstance(vals[0], (list, tuple)):
        vals = tuple(vals[0])
    if not vals:
        raise LanguageError(f"{op} of no values")
    acc = vals[0]
    for v in vals[1:]:
        acc = _op(op, acc, v)
    return acc if isinstance(acc, Sym) else Sym(lift(acc))


def clamp(v: Value, lo: int | float, hi: int | float) -> Sym:
    """``v`` limited to ``[lo, hi]`` (constant bounds)."""
    return Sym(_builder().emit("clamp", (lift(v, isinstance(lo, float)),), (lo, hi)))


def argmax(vals: Sequence[Value], ties: str = "first") -> Sym:
    """Index (0-based) of the largest value; ties broken by lowest index or uniformly."""
    if hasattr(vals, "symbolic_reduce"):  # a loop's outputs, traced symbolically (samplers.lang.loop)
        return vals.symbolic_reduce("argmax", ties)
    vals = list(vals)
    float_context = any(isinstance(v, float) or (isinstance(v, Sym) and v.node.kind == FLOAT) for v in vals)
    return Sym(_builder().emit("argmax", [lift(v, float_context) for v in vals], ties))


def all_of(*conds: Value) -> Sym:
    """Logical and of 0/1 values."""
    return _fold("and", conds)


def any_of(*conds: Value) -> Sym:
    """Logical or of 0/1 values."""
    return _fold("or", conds)
