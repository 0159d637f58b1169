"""Symbolic execution of the IR: the program's paths, split by the outcomes of noisy decisions.

Inputs ``x_i`` and continuous noise draws ``eta_e`` stay symbolic; every value is an
exact linear form over them (:class:`~verifiers.prover.linear.Lin`) or a concrete value.
Values without noise that are not linear in the inputs (a clamp of a query, a float64
table) are variables ``v_k`` of their own (:mod:`verifiers.prover.derived`): functions of
the input, not decisions, so ``x`` and ``x'`` need not take the same branch of them.
A *decision* is a node whose result depends on noisy values non-linearly: a
comparison, an ``argmax``, ``min`` / ``max`` / ``abs`` / ``clamp`` (and a noise-free
comparison that chooses between noisy values).  Paths are the leaves
of a decision tree explored depth first: at each step the smallest decision node that
an output still needs (given the outcomes fixed so far: an ``ite`` whose condition is
known needs only its chosen branch) is split by its outcomes.  A decision masked on a
path (an SVT comparison after the cutoff) is never split, which keeps sparse vector at
O(n^c) paths instead of 2^n.  Every path records the constraints ``form rel 0`` its
outcomes impose and its outputs as linear forms (or concrete values, BOTTOM included).

Outcome numbering (also the proof-data format): a comparison's outcome is its 0/1
value; ``argmax`` its index (lowest index on ties); ``min(a, b)`` 0 when ``a <= b``;
``max(a, b)`` 0 when ``a >= b``; ``abs(a)`` 0 when ``a >= 0``; ``clamp(a)`` 0 below
``lo``, 1 inside, 2 above ``hi``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from samplers import deadline
from samplers.lang.ir import BOTTOM, COMPARE, CONTINUOUS_NOISE, LOGIC, Program, evaluate
from verifiers.prover.derived import derived
from verifiers.prover.linear import Lin


class Unsupported(Exception):
    """The program uses something the alignment rule has no sound treatment for."""

    def __init__(self, reason: str, node: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.node = node


@dataclass(frozen=True)
class Pending:
    """A value that depends on an undecided outcome; it lies in ``[lo, hi]``."""

    lo: Any
    hi: Any


def _pending(v: Any) -> bool:
    return isinstance(v, Pending)


INF = float("inf")


def _bounds(v: Any) -> tuple[Any, Any]:
    """Bounds that hold for every input, not only the declared domain (the IR's ranges do not)."""
    if _pending(v):
        return v.lo, v.hi
    if isinstance(v, Lin) and v.is_const:
        return v.const, v.const
    if isinstance(v, Fraction):
        return v, v
    return -INF, INF


def _range(n: Any, args: list[Any]) -> Pending:
    """A pending node's input-independent range."""
    if n.op in COMPARE or n.op in LOGIC:
        return Pending(0, 1)
    if n.op == "argmax":
        return Pending(0, len(n.args) - 1)
    if n.op == "clamp":
        return Pending(*n.attr)
    if n.op == "ite":
        (alo, ahi), (blo, bhi) = _bounds(args[1]), _bounds(args[2])
        return Pending(min(alo, blo), max(ahi, bhi))
    return Pending(-INF, INF)


def _pending_value(n: Any, args: list[Any]) -> Any:
    """A pending node's value: concrete when the argument ranges already decide it (a count
    past the cutoff stays past it whatever the undecided comparisons say)."""
    bounds = [_bounds(a) for a in args]
    if n.op in ("add", "sub") and all(not isinstance(a, Lin) or a.is_const for a in args):
        (alo, ahi), (blo, bhi) = bounds
        return Pending(alo + blo, ahi + bhi) if n.op == "add" else Pending(alo - bhi, ahi - blo)
    if n.op in ("le", "lt") and all(not isinstance(a, Lin) or a.is_const for a in args):
        (alo, ahi), (blo, bhi) = bounds
        if (ahi <= blo) if n.op == "le" else (ahi < blo):
            return Fraction(1)
        if (alo > bhi) if n.op == "le" else (alo >= bhi):
            return Fraction(0)
    if n.op == "and" and any(a == 0 for a in args if isinstance(a, Fraction)):
        return Fraction(0)
    if n.op == "or" and any(a == 1 for a in args if isinstance(a, Fraction)):
        return Fraction(1)
    return _range(n, args)
DECIDED_BY_SHAPE = frozenset({"argmax", "min", "max", "abs", "clamp"})
UNIFORM_TIES = "argmax with uniform ties between values without noise: ties have positive probability"


@dataclass(frozen=True)
class Constraint:
    """``form rel 0`` imposed on a path by the outcome of decision ``node``."""

    node: int
    form: Lin
    rel: str


@dataclass
class Path:
    """One leaf of the decision tree: outcomes, the constraints they impose, the outputs."""

    decisions: dict[int, int]
    constraints: list[Constraint]
    outputs: list[Any]  # Lin, or a concrete Fraction / BOTTOM
    pairing: dict[int, Lin] = field(default_factory=dict)  # draw -> input form it is added to


def noise_laws(program: Program) -> dict[int, tuple[str, Fraction]]:
    """Each continuous draw's law and scale at its exact binary value; other noise is refused."""
    laws = {}
    for i, n in enumerate(program.nodes):
        if n.op in CONTINUOUS_NOISE:
            laws[i] = (n.op, Fraction(n.attr))
        elif n.op == "geom":
            raise Unsupported("clamped two-sided geometric noise: shifting it moves mass across "
                              "the clamped ends, so no alignment cost is sound", i)
        elif n.op == "draw":
            raise Unsupported("a finite noise law (draw): its support is bounded, shifts leave it", i)
    return laws


def _concrete(v: Any) -> Any:
    if v is BOTTOM or isinstance(v, Fraction):
        return v
    return Fraction(v)


def _lin(v: Any, node: int) -> Lin:
    if isinstance(v, Lin):
        return v
    if v is BOTTOM:
        raise Unsupported("BOTTOM used as a number", node)
    return Lin(v)


def _symbolic(v: Any) -> bool:
    return isinstance(v, Lin) and not v.is_const


def _compare(op: str, a: Lin, b: Lin, outcome: int) -> tuple[Lin, str]:
    """``form rel 0`` for a comparison's outcome (``lt`` true: ``b - a > 0``, ...)."""
    if op in ("eq", "ne"):
        return a - b, "==" if (op == "eq") == bool(outcome) else "!="
    strict = op == "lt"
    if outcome:
        return b - a, ">" if strict else ">="
    return a - b, ">=" if strict else ">"


def outcomes(program: Program, node: int) -> range:
    n = program.nodes[node]
    if n.op == "argmax":
        return range(len(n.args))
    return range(3) if n.op == "clamp" else range(2)


def decide(program: Program, node: int, args: list[Lin], outcome: int) -> tuple[Any, list[tuple[Lin, str]]]:
    """The value of decision ``node`` with the given outcome and the constraints it imposes."""
    n = program.nodes[node]
    if n.op in COMPARE:
        return Fraction(outcome), [_compare(n.op, args[0], args[1], outcome)]
    if n.op == "argmax":
        k = outcome
        cons = [(args[k] - args[j], ">" if j < k else ">=") for j in range(len(args)) if j != k]
        if n.attr != "first" and any(not f.vars_of("e") for f, _ in cons):
            raise Unsupported(UNIFORM_TIES, node)
        return Fraction(k), cons
    if n.op == "max":
        a, b = args
        return (a, [(a - b, ">=")]) if outcome == 0 else (b, [(b - a, ">")])
    if n.op == "min":
        a, b = args
        return (a, [(b - a, ">=")]) if outcome == 0 else (b, [(a - b, ">")])
    if n.op == "abs":
        (a,) = args
        return (a, [(a, ">=")]) if outcome == 0 else (-a, [(-a, ">")])
    (a,) = args
    lo, hi = (Lin(Fraction(v)) for v in n.attr)
    if outcome == 0:
        return lo, [(lo - a, ">")]
    if outcome == 2:
        return hi, [(a - hi, ">")]
    return a, [(a - lo, ">="), (hi - a, ">=")]


class _Evaluation:
    """Node values under fixed outcomes; open decisions are those whose arguments are known."""

    def __init__(self, program: Program, decisions: dict[int, int], base: _Evaluation | None = None) -> None:
        self.program = program
        self.noise_free = derived(program).forms
        self.vals: list[Any] = []
        self.open: set[int] = set()
        self.constraints: list[tuple[int, Lin, str]] = []
        self.pairing: dict[int, Lin] = dict(base.pairing) if base else {}
        for i, n in enumerate(program.nodes):
            known = base.vals[i] if base is not None else None
            self.vals.append(self._value(i, n, decisions) if known is None or _pending(known) else known)

    def _value(self, i: int, n: Any, decisions: dict[int, int]) -> Any:
        if i in self.noise_free:  # no decision: a form over inputs and noise-free derived values
            return self.noise_free[i]
        if n.op == "input":
            return Lin.var(("x", n.attr))
        if n.op in CONTINUOUS_NOISE:
            return Lin.var(("e", i))
        if n.op == "const":
            return _concrete(n.attr)
        args = [self.vals[a] for a in n.args]
        if n.op == "ite":
            cond = args[0]
            if _pending(cond):
                if isinstance(args[1], Fraction) and args[1] == args[2]:
                    return args[1]
                return _range(n, args)
            if _symbolic(cond):
                raise Unsupported("a noisy value used as a condition", i)
            return args[1] if (cond.const if isinstance(cond, Lin) else cond) else args[2]
        if any(_pending(a) for a in args):
            return _pending_value(n, args)
        if not any(_symbolic(a) for a in args):
            conc = [a.const if isinstance(a, Lin) else a for a in args]
            try:
                if n.op == "argmax" and n.attr != "first" and conc.count(max(conc)) > 1:
                    raise Unsupported(UNIFORM_TIES, i)  # a coin flip, not a value
                return _concrete(evaluate(n.op, n.attr, conc))
            except (TypeError, ArithmeticError) as exc:
                raise Unsupported(f"{n.op} on {conc}: {exc}", i) from None
        if n.op in COMPARE or n.op in DECIDED_BY_SHAPE:
            if n.op == "clamp" and n.attr[0] == n.attr[1]:
                return _concrete(n.attr[0])
            if n.op in COMPARE or n.op in ("min", "max"):
                a, b = (_lin(v, i) for v in args)
                if (a - b).is_const:  # the same noisy value on both sides: no decision to split
                    gap = (a - b).const
                    if n.op in COMPARE:
                        return _concrete(evaluate(n.op, n.attr, [gap, Fraction(0)]))
                    return a if (gap <= 0 if n.op == "min" else gap >= 0) else b
            if i not in decisions:
                self.open.add(i)
                return _range(n, args)
            value, cons = decide(self.program, i, [_lin(a, i) for a in args], decisions[i])
            self.constraints.extend((i, f, r) for f, r in cons)
            return value
        return self._linear(i, n, [_lin(a, i) for a in args])

    def _linear(self, i: int, n: Any, args: list[Lin]) -> Lin:
        if n.op in ("add", "sub"):
            a, b = args[0], args[1] if n.op == "add" else -args[1]
            for noise, other in ((a, b), (b, a)):
                es = noise.vars_of("e")
                if len(es) == 1 and len(noise.coef) == 1 and noise.const == 0 and not other.vars_of("e"):
                    self.pairing.setdefault(es[0][1], other.part("x", "v").scale(noise.coef[es[0]]))
            return a + b
        if n.op == "neg":
            return -args[0]
        if n.op == "mul":
            a, b = args
            if a.is_const:
                return b.scale(a.const)
            if b.is_const:
                return a.scale(b.const)
            raise Unsupported("a product of two symbolic values", i)
        if n.op in LOGIC:
            raise Unsupported("a noisy value used as a boolean", i)
        raise Unsupported(f"{n.op} of a noisy value", i)

    def needed_open(self) -> list[int]:
        """Open decisions an output still depends on."""
        nodes, vals = self.program.nodes, self.vals
        stack = [o for o in self.program.outputs if _pending(vals[o])]
        seen: set[int] = set()
        found = []
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            if k in self.open:
                found.append(k)
                continue
            n = nodes[k]
            if n.op == "ite" and not _pending(vals[n.args[0]]):
                cond = vals[n.args[0]]
                branch = n.args[1] if (cond.const if isinstance(cond, Lin) else cond) else n.args[2]
                stack.append(branch)
            else:
                stack.extend(a for a in n.args if _pending(vals[a]))
        return found


def paths(program: Program, max_paths: int = 20000) -> Iterator[Path]:
    """Every path of the program's decision tree (raises :class:`Unsupported` past ``max_paths``)."""
    noise_laws(program)
    base = _Evaluation(program, {})  # values no outcome changes are computed once
    stack: list[dict[int, int]] = [{}]
    count = 0
    while stack:
        deadline.check("while enumerating the program's paths")
        decisions = stack.pop()
        ev = _Evaluation(program, decisions, base) if decisions else base
        needed = ev.needed_open()
        if needed:
            node = min(needed)
            for o in reversed(outcomes(program, node)):
                stack.append({**decisions, node: o})
            continue
        if any(_pending(ev.vals[o]) for o in program.outputs):
            raise Unsupported("an output depends on an outcome no decision fixes")
        count += 1
        if count > max_paths:
            raise Unsupported(f"more than {max_paths} paths (the path budget)")
        cons = [Constraint(i, f, r) for i, f, r in ev.constraints if f.coef]
        if any(not _holds_const(f, r) for _, f, r in ev.constraints if not f.coef):
            continue  # an outcome impossible for constant values: not a path
        yield Path(decisions, cons, [ev.vals[o] for o in program.outputs], ev.pairing)


def _holds_const(form: Lin, rel: str) -> bool:
    c = form.const
    return {">=": c >= 0, ">": c > 0, "==": c == 0, "!=": c != 0}[rel]
