"""Values without noise that are not affine in the inputs: clamps, minima, maxima, tables.

A node whose cone holds no random draw is a deterministic function of the input: on
neighbours ``x`` and ``x'`` it may take different branches (``clip(x[0], 0, 5)`` is 5
on one and 2 on the other) and only the difference of its values matters.  Such a node
is no path decision: it is a variable ``("v", node)`` of the path forms, and its
difference ``("w", node) = v(x) - v(x')`` is

* bounded here by interval arithmetic, soundly for every input the conditions are
  discharged for (replace_one: the declared domain; otherwise every integer) and every
  difference of the relation (``|clamp(a) - clamp(a')| <= min(|a - a'|, hi - lo)``,
  minima and maxima are 1-Lipschitz, a value in ``[lo, hi]`` moves by at most ``hi - lo``),
  which the synthesiser uses to price shifts; and
* encoded exactly for z3 (:func:`z3_value`: ``If`` terms on ``x`` and on ``x - d``), which
  discharges every condition and the cost bound, so the level proved is z3's, never the
  intervals' guess.

Noise-free comparisons that choose between values with noise (the condition of an
``ite`` that is not itself noise-free) stay path decisions: there ``x`` and ``x'`` must
agree on the outcome.  So do nodes that read such a decision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

import z3

from samplers.lang.builder import draws_randomness
from samplers.lang.ir import COMPARE, LOGIC, Node, Program, evaluate, op_range
from samplers.lang.neighbours import ReplaceOne
from verifiers.prover.linear import Lin

INF = math.inf
AFFINE = frozenset({"add", "sub", "neg"})
Interval = tuple[Any, Any]  # (lo, hi): Fractions or +-inf
Value = Any  # a Lin over ("x", i) and ("v", k), or a concrete Fraction


@dataclass(frozen=True)
class Definition:
    """A derived node: ``op(args; attr)`` on forms over inputs and earlier derived nodes."""

    op: str
    attr: Any
    args: tuple[Value, ...]
    support: frozenset[int]  # the input coordinates it reads
    range: Interval  # its values, for every integer input


def _noise_free(program: Program) -> list[bool]:
    free: list[bool] = []
    for n in program.nodes:
        free.append(not draws_randomness(n.op, n.attr) and all(free[a] for a in n.args))
    return free


def _deciding(program: Program, free: list[bool]) -> set[int]:
    """Noise-free nodes that decide between values that are not noise-free (they stay decisions)."""
    marked: set[int] = set()
    for i in range(len(program.nodes) - 1, -1, -1):
        n = program.nodes[i]
        if n.op == "ite" and (not free[i] or n.bottom or i in marked):
            cond = n.args[0]
            if free[cond]:
                marked.add(cond)
        elif i in marked and (n.op in LOGIC or n.op == "ite"):
            marked.update(a for a in n.args if free[a])
    return marked


def _range(op: str, attr: Any, ranges: list[Interval]) -> Interval:
    """The range of ``op`` on arguments with these ranges (the IR's own range rules)."""
    if op in ("mul", "floordiv") and any(INF in (abs(lo), abs(hi)) for lo, hi in ranges):
        return -INF, INF
    if op == "mod" and any(INF in (abs(lo), abs(hi)) for lo, hi in ranges):
        return Fraction(0), Fraction(attr - 1)
    args = [Node("input", (), None, lo, hi) for lo, hi in ranges]
    lo, hi, _ = op_range(op, attr, args)
    return lo, hi


def _support(args: tuple[Value, ...], defs: Mapping[int, Definition]) -> frozenset[int]:
    out: set[int] = set()
    for a in args:
        if isinstance(a, Lin):
            for var in a.coef:
                out.update({var[1]} if var[0] == "x" else defs[var[1]].support)
    return frozenset(out)


class Derived:
    """The noise-free values of a program: ``forms[node]`` for every node computed without a
    decision (a Lin over inputs and derived variables, or a Fraction), ``defs`` the derived ones."""

    def __init__(self, program: Program) -> None:
        dom = program.domain
        # replace_one: x and x' range over the declared domain; the other relations' conditions
        # hold for every integer input (see verifiers.prover.neighbourhood)
        self.inputs = tuple(zip(dom.lo, dom.hi)) if isinstance(program.neighbours, ReplaceOne) else None
        free = _noise_free(program)
        deciding = _deciding(program, free)
        self.forms: dict[int, Value] = {}
        self.defs: dict[int, Definition] = {}
        self._memo: dict[tuple, Interval] = {}
        for i, n in enumerate(program.nodes):
            if not free[i] or i in deciding or n.bottom or any(a not in self.forms for a in n.args):
                continue
            self._add(i, n)

    def form_range(self, v: Value) -> Interval:
        """The values of a noise-free form over the inputs it may be evaluated on."""
        if not isinstance(v, Lin):
            return v, v
        lo = hi = v.const
        for var, k in v.coef.items():
            if var[0] == "v":
                vlo, vhi = self.defs[var[1]].range
            else:
                vlo, vhi = self.inputs[var[1]] if self.inputs is not None else (-INF, INF)
            a, b = (vlo * k, vhi * k) if k > 0 else (vhi * k, vlo * k)
            lo, hi = lo + a, hi + b
        return lo, hi

    def _add(self, i: int, n: Node) -> None:
        if n.op == "input":
            self.forms[i] = Lin.var(("x", n.attr))
            return
        if n.op == "const":
            self.forms[i] = Fraction(n.attr)
            return
        args = tuple(self.forms[a] for a in n.args)
        symbolic = [a for a in args if isinstance(a, Lin) and not a.is_const]
        conc = [a.const if isinstance(a, Lin) else a for a in args]
        if not symbolic:
            self.forms[i] = Fraction(evaluate(n.op, n.attr, conc))
        elif n.op in AFFINE or (n.op == "mul" and len(symbolic) == 1):
            lins = [a if isinstance(a, Lin) else Lin(a) for a in args]
            if n.op == "neg":
                self.forms[i] = -lins[0]
            elif n.op == "mul":
                (k,) = [a.const for a in lins if a.is_const]
                self.forms[i] = symbolic[0].scale(k)
            else:
                self.forms[i] = lins[0] + lins[1] if n.op == "add" else lins[0] - lins[1]
        else:
            rng = _range(n.op, n.attr, [self.form_range(a) for a in args])
            self.defs[i] = Definition(n.op, n.attr, args, _support(args, self.defs), rng)
            self.forms[i] = Lin.var(("v", i))

    # -- differences between neighbours, as intervals -----------------------------------
    def interval(self, form: Value, moves: Mapping[int, Interval]) -> Interval:
        """An interval holding ``form`` when every ``x_j - x'_j`` lies in ``moves[j]`` (coordinates
        not listed do not move), for every integer input: ``d_j`` (and ``x_j``) range over
        ``moves[j]``, ``w_k`` (and ``v_k``) over the differences of derived node ``k``."""
        if not isinstance(form, Lin):
            return form, form
        lo = hi = form.const
        for var, k in form.coef.items():
            if var[0] in "xd":
                vlo, vhi = moves.get(var[1], (0, 0))
            elif var[0] in "vw":
                vlo, vhi = self.node_difference(var[1], moves)
            else:
                raise ValueError(f"a noisy variable {var} in a noise-free form")
            a, b = (vlo * k, vhi * k) if k > 0 else (vhi * k, vlo * k)
            lo, hi = lo + a, hi + b
        return lo, hi

    def node_difference(self, node: int, moves: Mapping[int, Interval]) -> Interval:
        """The interval of ``v(x) - v(x')`` for derived ``node``."""
        d = self.defs[node]
        key = (node, tuple(sorted((j, m) for j, m in moves.items() if j in d.support)))
        if key not in self._memo:
            self._memo[key] = self._node_difference(d, moves)
        return self._memo[key]

    def _node_difference(self, d: Definition, moves: Mapping[int, Interval]) -> Interval:
        width = d.range[1] - d.range[0]
        if not any(j in d.support for j in moves):
            return Fraction(0), Fraction(0)
        diffs = [self.interval(Lin(0, a.coef) if isinstance(a, Lin) else Fraction(0), moves) for a in d.args]
        if d.op == "clamp":
            (p, q), c = diffs[0], Fraction(d.attr[1]) - Fraction(d.attr[0])
            lo, hi = max(min(p, 0), -c), min(max(q, 0), c)
        elif d.op in ("min", "max"):
            lo, hi = min(diffs[0][0], diffs[1][0]), max(diffs[0][1], diffs[1][1])
        elif d.op == "abs":
            m = max(abs(diffs[0][0]), abs(diffs[0][1]))
            lo, hi = -m, m
        elif d.op == "floordiv":
            (p, q), k = diffs[0], d.attr
            lo, hi = (math.floor(p / k) if p != -INF else -INF), (math.ceil(q / k) if q != INF else INF)
        elif d.op == "ite":
            (alo, ahi), (blo, bhi) = (self.form_range(a) for a in d.args[1:])
            lo, hi = min(diffs[1][0], diffs[2][0]), max(diffs[1][1], diffs[2][1])
            if diffs[0] != (0, 0):  # the condition may differ: one branch on x, the other on x'
                lo, hi = min(lo, alo - bhi, blo - ahi), max(hi, ahi - blo, bhi - alo)
        else:  # comparisons, logic, argmax, products, remainders: anywhere in the range
            lo, hi = -width, width
        return max(lo, -width), min(hi, width)


def derived(program: Program) -> Derived:
    """The program's noise-free values (computed once per program)."""
    meta = program._meta
    if "prover.derived" not in meta:
        meta["prover.derived"] = Derived(program)
    return meta["prover.derived"]


# -- exact z3 encoding -----------------------------------------------------------------
def z3_op(op: str, attr: Any, a: list[Any]) -> Any:
    """``op`` on z3 Real terms, exactly (0/1 for comparisons and logic, the first maximum's index)."""
    one, zero = z3.RealVal(1), z3.RealVal(0)
    if op == "clamp":
        lo, hi = (z3.RealVal(Fraction(v)) for v in attr)
        return z3.If(a[0] < lo, lo, z3.If(a[0] > hi, hi, a[0]))
    if op in ("min", "max"):
        return z3.If(a[0] <= a[1] if op == "min" else a[0] >= a[1], a[0], a[1])
    if op == "abs":
        return z3.If(a[0] >= 0, a[0], -a[0])
    if op == "mul":
        return a[0] * a[1]
    if op == "floordiv":
        return z3.ToReal(z3.ToInt(a[0] / attr))
    if op == "mod":
        return a[0] - attr * z3.ToReal(z3.ToInt(a[0] / attr))
    if op == "ite":
        return z3.If(a[0] != 0, a[1], a[2])
    if op == "argmax":
        out: Any = z3.RealVal(len(a) - 1)
        for k in range(len(a) - 2, -1, -1):
            out = z3.If(z3.And([a[k] >= a[j] for j in range(k + 1, len(a))]
                               + [a[k] > a[j] for j in range(k)]), z3.RealVal(k), out)
        return out
    if op in COMPARE:
        test = {"lt": lambda: a[0] < a[1], "le": lambda: a[0] <= a[1],
                "eq": lambda: a[0] == a[1], "ne": lambda: a[0] != a[1]}[op]()
        return z3.If(test, one, zero)
    logic = {"and": lambda: z3.And(a[0] != 0, a[1] != 0), "or": lambda: z3.Or(a[0] != 0, a[1] != 0),
             "xor": lambda: z3.Xor(a[0] != 0, a[1] != 0), "not": lambda: a[0] == 0}
    if op in logic:
        return z3.If(logic[op](), one, zero)
    raise ValueError(f"no z3 encoding of a noise-free {op}")
