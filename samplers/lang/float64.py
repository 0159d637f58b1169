"""float64 exactness of noise-free arithmetic: one meaning for every backend, numpy's.

A traced program is read two ways.  Per input (the enumerator, the samplers, every
specialisation to concrete inputs) an operation evaluates as numpy does, in float64.
Symbolically (the prover, SMT, the continuous backend) a node is read as the real number
its operation defines.  The two readings agree exactly where every noise-free float
operation is exact -- its float64 result is its real result -- for every input of the
declared domain.  ``(q + 0.1) - 0.1 == q`` is true over the reals and false in numpy for
q = 4; a proof about the real reading says nothing about the code the user runs.

So the builder keeps a noise-free float operation symbolic only where exactness is
proved, and otherwise replaces it by its float64 value per input (a table of constants
selected by comparisons on the inputs, which every backend reads alike), or refuses.

The proof is a *grid*: every value of a node is an integer multiple of ``2**exp`` of
magnitude at most ``bound * 2**exp``.  Sums, differences, products, negations, minima,
maxima, clamps and choices of grid values are again grid values; a grid value with
``bound <= 2**53`` (and exponents inside the double range) is a double, so an operation
whose result grid is that small rounds nothing.  Comparisons of exact values are exact.
Where the grid is too coarse a proof, the values themselves are checked input by input.

Noise-involving operations keep the real-number reading: that is the real-number
semantics of continuous noise, whose float64 reading is the separate float-level audit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Sequence

from samplers.errors import LanguageError
from samplers.lang.ir import evaluate

MANTISSA = 2**53  # integers of magnitude at most this are doubles exactly
MIN_EXP = -1074  # the exponent of the smallest subnormal double
MAX_MAGNITUDE = 2**1023  # below the double range's end (2**1024), with room to spare
TABLE_LIMIT = 4096  # input combinations an inexact operation is evaluated on, one by one
WORK_LIMIT = 2_000_000  # node evaluations one table may take (combinations times nodes)
CHOICE = frozenset({"min", "max", "clamp", "ite"})  # operations whose value is one of their operands


@dataclass(frozen=True, slots=True)
class Grid:
    """Every value is ``k * 2**exp`` with ``|k| <= bound``; ``negzero``: it may be -0.0."""

    exp: int
    bound: int
    negzero: bool = False

    @property
    def doubles(self) -> bool:
        """Whether every value of the grid is a double (so an operation landing on it is exact)."""
        if self.bound == 0:
            return True
        return self.bound <= MANTISSA and self.exp >= MIN_EXP and self.bound * Fraction(2) ** self.exp < MAX_MAGNITUDE


def _odd_part(q: Fraction) -> tuple[int, int]:
    """``q = m * 2**e`` with ``m`` an integer as small as possible: (m, e)."""
    num, den = q.numerator, q.denominator
    if num == 0:
        return 0, 0
    tz = (num & -num).bit_length() - 1
    return num >> tz, tz - (den.bit_length() - 1)  # a double's denominator is a power of two


def value_grid(values: Iterable[Any]) -> Grid:
    """The tightest grid holding the given numbers (ints, floats; -0.0 noted)."""
    exp, parts, negzero = None, [], False
    for v in values:
        negzero = negzero or is_negative_zero(v)
        m, e = _odd_part(Fraction(v))
        if m:
            parts.append((m, e))
            exp = e if exp is None else min(exp, e)
    if exp is None:
        return Grid(0, 0, negzero)
    return Grid(exp, max(abs(m) << (e - exp) for m, e in parts), negzero)


def _align(g: Grid, exp: int) -> int:
    """``g``'s bound on the finer grid ``2**exp`` (``exp <= g.exp``)."""
    return g.bound << (g.exp - exp)


def _choice(grids: Sequence[Grid]) -> Grid:
    """Values that are one of the operands' values (min, max, clamp, ite)."""
    exp = min(g.exp for g in grids)
    return Grid(exp, max(_align(g, exp) for g in grids), any(g.negzero for g in grids))


def _zero(n: Any, g: Grid) -> bool:
    return n.lo <= 0 <= n.hi or g.negzero


def _negative_signed(n: Any, g: Grid) -> bool:
    return n.lo < 0 or g.negzero


def op_grid(op: str, attr: Any, grids: Sequence[Grid], nodes: Sequence[Any]) -> Grid | None:
    """The grid of ``op`` on operands with ``grids`` and ranges ``nodes``; None where none is known.

    Comparisons and logic give 0/1; the caller checks ``Grid.doubles`` of the result.
    ``negzero`` follows IEEE signed zeros: x + (-x) is +0.0, -0.0 + -0.0 and 0 * -1.0 are -0.0.
    """
    if op in ("lt", "le", "eq", "ne", "and", "or", "xor", "not", "argmax"):
        return Grid(0, 1 if op != "argmax" else max(len(grids) - 1, 0))
    if op == "neg":
        return Grid(grids[0].exp, grids[0].bound, nodes[0].kind == "float" and _zero(nodes[0], grids[0]))
    if op == "abs":
        return Grid(grids[0].exp, grids[0].bound)
    if op in CHOICE:  # the value of an ite is one of its branches; a clamp's may be one of its bounds
        return _choice(grids[1:] if op == "ite" else [*grids, value_grid(attr)] if op == "clamp" else grids)
    if op in ("add", "sub"):
        a, b = grids
        exp = min(a.exp, b.exp)
        negzero = a.negzero and (b.negzero if op == "add" else _zero(nodes[1], b))
        return Grid(exp, _align(a, exp) + _align(b, exp), negzero)
    if op == "mul":
        (a, b), (na, nb) = grids, nodes
        negzero = (_zero(na, a) and (_negative_signed(nb, b) or a.negzero)) or (
            _zero(nb, b) and (_negative_signed(na, a) or b.negzero))
        return Grid(a.exp + b.exp, a.bound * b.bound, negzero)
    return None  # floordiv, mod: integer operations, never on floats


def evaluate_exactly(op: str, attr: Any, vals: Sequence[Any]) -> Any:
    """The real value of ``op`` on the given (exact) operand values; None where an operand is infinite or
    NaN, which has none (the operation is then read in float64 only: ``q < nan`` is False)."""
    refuse_nan_choice(op, vals)
    if any(isinstance(v, float) and not math.isfinite(v) for v in vals):
        return None
    exact_attr = tuple(Fraction(a) for a in attr) if op == "clamp" else attr
    return evaluate(op, exact_attr, [Fraction(v) if isinstance(v, float) else v for v in vals])


def refuse_nan_choice(op: str, vals: Sequence[Any]) -> None:
    """A minimum, maximum, clamp or argmax of NaN: numpy's is NaN (or the NaN's index), Python's (which
    the float64 reading evaluates) depends on the order of the operands, so it is refused."""
    if op in ("min", "max", "clamp", "argmax") and any(isinstance(v, float) and math.isnan(v) for v in vals):
        raise LanguageError(f"{op} of NaN: numpy's result is NaN (or its index), Python's is not; take NaN out first")


def is_power_of_two(v: Any) -> bool:
    """Whether ``v`` is a (finite, nonzero) signed power of two: dividing by it is exact in float64."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v != 0 and math.isfinite(v) \
        and abs(math.frexp(v)[0]) == 0.5


def is_negative_zero(v: Any) -> bool:
    return isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0


def refuse_non_finite(nodes: Iterable[Any]) -> None:
    """Raise LanguageError for an infinite or NaN constant left in a finished program.

    Noise-free operations on one were evaluated in float64 (and folded, or refused where the value is
    not finite); one that is left meets continuous noise, read as real numbers, which have neither.
    """
    for n in nodes:
        if n.op == "const" and isinstance(n.attr, float) and not math.isfinite(n.attr):
            hint = "; start a running maximum from the first value, not -inf" if math.isinf(n.attr) else ""
            raise LanguageError(f"the constant {n.attr} meets continuous noise, whose values are read as real "
                                f"numbers (which have no inf or NaN){hint}")
