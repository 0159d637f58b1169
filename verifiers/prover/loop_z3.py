"""The z3 meaning of a symbolic loop iteration's nodes (:class:`samplers.lang.loop.LoopTrace`).

Every value is a pair ``(bottom, value)``: a z3 Bool (whether it is BOTTOM) and a z3 Real.
Integer leaves are z3 Ints read as reals, continuous draws and real-valued state are Reals,
comparisons and logic give 0/1; constants are their exact (binary) values.  Like the per-n
alignment rule, values that depend on continuous noise are read as real numbers.  What the
encoding does not cover (a product of two variables, ``argmax``, discrete
or Gaussian noise) is an :class:`Unencodable`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

import z3

from samplers.lang.ir import BOTTOM, COMPARE, Node

Value = tuple[Any, Any]  # (z3 Bool: is BOTTOM, z3 Real)
DRAWS = ("laplace", "exponential")


class Unencodable(Exception):
    """A node the every-n encoding has no exact reading for."""

    def __init__(self, reason: str, node: int) -> None:
        super().__init__(reason)
        self.reason, self.node = reason, node


def real(q: Fraction | int) -> Any:
    return z3.RealVal(f"{Fraction(q).numerator}/{Fraction(q).denominator}")


def _b(v: Value) -> Any:
    return v[1] != 0


def _num(cond: Any) -> Value:
    return (z3.BoolVal(False), z3.If(cond, real(1), real(0)))


def evaluate(nodes: list[Node], leaves: Mapping[int, Value], upto: int, start: int = 0,
             known: Mapping[int, Value] | None = None) -> dict[int, Value]:
    """The values of nodes ``start .. upto - 1`` given the ``leaves`` (inputs, draws, state) and the
    ``known`` values of earlier nodes."""
    val: dict[int, Value] = dict(known or {})
    no = z3.BoolVal(False)
    for i in range(start, upto):
        n = nodes[i]
        if i in leaves:
            val[i] = leaves[i]
            continue
        if n.op in ("input", *DRAWS) and i in val:  # an element or a draw given by ``known``
            continue
        a = [val[j] for j in n.args] if n.op != "const" else []
        op = n.op
        if op == "const":
            val[i] = (z3.BoolVal(True), real(0)) if n.attr is BOTTOM else (no, real(Fraction(n.attr)))
        elif op in ("input", *DRAWS):
            raise Unencodable(f"{op} node without a value", i)
        elif op == "add":
            val[i] = (no, a[0][1] + a[1][1])
        elif op == "sub":
            val[i] = (no, a[0][1] - a[1][1])
        elif op == "neg":
            val[i] = (no, -a[0][1])
        elif op == "mul":
            consts = [k for k, j in enumerate(n.args) if nodes[j].op == "const"]
            if not consts:
                raise Unencodable("a product of two variables", i)
            val[i] = (no, a[0][1] * a[1][1])
        elif op in ("mod", "floordiv"):  # an integer operand, a positive constant divisor: z3's div and
            k = z3.ToInt(a[0][1])        # mod floor and stay non-negative as Python's // and % do
            val[i] = (no, z3.ToReal(k % n.attr if op == "mod" else k / n.attr))
        elif op == "abs":
            val[i] = (no, z3.If(a[0][1] >= 0, a[0][1], -a[0][1]))
        elif op in ("min", "max"):
            first = a[0][1] <= a[1][1] if op == "min" else a[0][1] >= a[1][1]
            val[i] = (no, z3.If(first, a[0][1], a[1][1]))
        elif op == "clamp":
            lo, hi = (real(Fraction(v)) for v in n.attr)
            x = a[0][1]
            val[i] = (no, z3.If(x < lo, lo, z3.If(x > hi, hi, x)))
        elif op in COMPARE:
            (ba, xa), (bb, xb) = a
            if op == "lt":
                val[i] = _num(xa < xb)
            elif op == "le":
                val[i] = _num(xa <= xb)
            else:
                same = z3.Or(z3.And(ba, bb), z3.And(z3.Not(ba), z3.Not(bb), xa == xb))
                val[i] = _num(same if op == "eq" else z3.Not(same))
        elif op == "and":
            val[i] = _num(z3.And(_b(a[0]), _b(a[1])))
        elif op == "or":
            val[i] = _num(z3.Or(_b(a[0]), _b(a[1])))
        elif op == "xor":
            val[i] = _num(z3.Xor(_b(a[0]), _b(a[1])))
        elif op == "not":
            val[i] = _num(z3.Not(_b(a[0])))
        elif op == "ite":
            c = _b(a[0])
            val[i] = (z3.If(c, a[1][0], a[2][0]), z3.If(c, a[1][1], a[2][1]))
        else:
            raise Unencodable(f"{op} has no exact every-n reading", i)
    return val


def same(u: Value, v: Value) -> Any:
    """Both BOTTOM, or neither and equal."""
    return z3.Or(z3.And(u[0], v[0]), z3.And(z3.Not(u[0]), z3.Not(v[0]), u[1] == v[1]))
