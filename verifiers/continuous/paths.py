"""Symbolic execution of a program with continuous noise: its finitely many paths.

The program is specialised to an input (constants folded), then run with every
continuous noise value kept symbolic (a variable ``z_v`` with a known law) and every
discrete noise value enumerated.  Floats become exact affine forms in the noise
(:mod:`verifiers.continuous.linear`); a comparison whose outcome depends on the noise *branches*:
each outcome adds a half-space constraint to the path.  A path therefore has an exact
weight (the discrete draws and tie shares), a list of constraints (the region of noise
space that follows it) and the values it computes, which may be constants or forms.

Evaluation is lazy (an ``ite`` evaluates only the chosen branch, ``and``/``or``
short-circuit, outputs are evaluated on demand), so a sparse vector that halted does
not branch on the queries after the halt, and an event that fails on its first output
component prunes the path there.  Nested ``max``/``min`` are evaluated as one n-ary
choice (the winner beats every other value), which keeps the regions star-shaped
around the winner's noise (see :mod:`verifiers.continuous.region`).

Boundaries of half-spaces have probability zero under continuous noise, so strict and
non-strict comparisons coincide, and two values whose difference is random are equal
with probability zero; comparisons whose difference is a constant are decided exactly.
Paths are enumerated depth first by re-execution with a decision stack; a branch whose
constraints are certainly empty (per-variable bounds, or a half-space that misses the
bounding box) is pruned, which is exact (it has probability zero).  Every path checks
the time limit in force (:mod:`samplers.deadline`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterator, Sequence

from samplers import deadline
from samplers.errors import BudgetExceeded, UnsupportedByBackend
from samplers.lang.builder import replay
from samplers.lang.ir import BOTTOM, CONTINUOUS_NOISE, FLOAT, Node, Program, evaluate
from verifiers.continuous.linear import Form, Value, add, neg, scale, sub

INF = math.inf
MAX_PATHS = 200_000
ONE = Fraction(1)  # default budget of paths (re-executions) per enumeration


class NonlinearProgram(UnsupportedByBackend):
    """The program computes a non-affine function of continuous noise (e.g. a product of two noise values)."""


class _DeadPath(Exception):
    """The current branch has probability zero (internal control flow)."""


@dataclass(frozen=True)
class Law:
    """A continuous noise law: ``laplace``, ``exponential`` or ``gaussian`` with an exact scale."""

    kind: str
    scale: Fraction

    @property
    def support(self) -> tuple[Fraction | float, Fraction | float]:
        return (Fraction(0), INF) if self.kind == "exponential" else (-INF, INF)


@dataclass(frozen=True)
class Specialised:
    """A program specialised to one input: its nodes, outputs and the laws of its noise variables."""

    nodes: tuple[Node, ...]
    outputs: tuple[int, ...]
    tuple_output: bool
    laws: dict[int, Law]
    flat: dict[int, tuple[int, ...]]  # max/min node -> operands of its nested chain
    int_compares: frozenset[int]  # comparisons of integers (decided early from partial sums)
    static: dict[int, Value]  # values that no branch decides (noise and affine functions of it)
    differences: dict = field(default_factory=dict)  # (a, b) -> b - a, shared by the paths
    choices: dict = field(default_factory=dict)  # (values, ties) -> an argmax's alternatives, shared by the paths


def specialise(program: Program, x: Sequence[int]) -> Specialised:
    """Replay ``program`` with the inputs ``x`` as constants."""
    nodes, outs = replay(program.nodes, program.outputs, inputs=tuple(x))
    laws = {i: Law(n.op, Fraction(n.attr)) for i, n in enumerate(nodes) if n.op in CONTINUOUS_NOISE}
    flat: dict[int, tuple[int, ...]] = {}
    for i, n in enumerate(nodes):
        if n.op in ("max", "min"):
            flat[i] = tuple(leaf for a in n.args
                            for leaf in (flat[a] if nodes[a].op == n.op else (a,)))
    compares = frozenset(i for i, n in enumerate(nodes) if _int_compare(n, nodes))
    return Specialised(tuple(nodes), tuple(outs), program.tuple_output, laws, flat, compares, _static(nodes))


_AFFINE = {"add": add, "sub": sub}


def _static(nodes: Sequence[Node]) -> dict[int, Value]:
    """The values every path shares, computed once per input instead of once per path."""
    out: dict[int, Value] = {}
    for i, n in enumerate(nodes):
        if n.op == "const":
            v = _const(n.attr)
            out[i] = Fraction(v) if n.kind == FLOAT and not _is_bottom(v) else v
        elif n.op in CONTINUOUS_NOISE:
            out[i] = Form.variable(i)
        elif n.op in _AFFINE and all(a in out for a in n.args):
            v = _AFFINE[n.op](out[n.args[0]], out[n.args[1]])
            out[i] = Fraction(v) if n.kind == FLOAT and not isinstance(v, Form) else v
        elif n.op == "neg" and n.args[0] in out:
            out[i] = neg(out[n.args[0]])
    return out


def _int_compare(n: Node, nodes: Sequence[Node]) -> bool:
    return n.op in ("lt", "le", "eq", "ne") and all(nodes[a].kind != FLOAT and not nodes[a].bottom for a in n.args)


def _const(attr: Any) -> Any:
    return Fraction(attr) if isinstance(attr, float) else attr


def _is_bottom(v: Any) -> bool:
    return v is BOTTOM or (isinstance(v, int) and not isinstance(v, bool) and v == BOTTOM)


class Run:
    """One execution along one path (see the module docstring); events use its comparisons."""

    def __init__(self, spec: Specialised, trace: list[int]) -> None:
        self.spec = spec
        self.trace = trace
        self.decisions: list[tuple[int, int]] = []  # (choice, number of alternatives)
        self.memo: dict[int, Value] = dict(spec.static)
        self.ranges: dict[int, tuple[Any, Any]] = {}  # integer bounds found so far (stay valid: values only get known)
        self.weight = Fraction(1)
        self.constraints: list[Form] = []
        # each variable's (lo, hi), replaced, never changed in place: a resumed run copies the dict only
        self.bounds: dict[int, tuple] = {v: tuple(law.support) for v, law in spec.laws.items()}
        self.wanted: dict[int, frozenset[int]] = {}  # argmax node -> the only winners explored (see expect)

    def resumed(self, trace: list[int] | None = None) -> "Run":
        """A run that goes on from where this finished run stopped, then follows ``trace`` (which
        starts with this run's own choices; None: those choices only): the state is copied, so this
        run stays as it is."""
        run = Run.__new__(Run)
        run.spec, run.trace = self.spec, [c for c, _ in self.decisions] if trace is None else trace
        run.decisions = list(self.decisions)
        run.memo, run.ranges = dict(self.memo), dict(self.ranges)
        run.weight, run.constraints = self.weight, list(self.constraints)
        run.bounds = dict(self.bounds)
        run.wanted = dict(self.wanted)
        return run

    # -- branching -------------------------------------------------------------------
    def branch(self, alternatives: Sequence[tuple[Fraction, tuple[Form, ...]] | None]) -> int:
        """Follow one of the alternatives (weight factor, extra constraints); None marks an impossible one."""
        k = len(self.decisions)
        if k < len(self.trace):
            choice = self.trace[k]
        else:
            choice = next((c for c, alt in enumerate(alternatives) if alt is not None and self._feasible(alt[1])),
                          len(alternatives) - 1)
        self.decisions.append((choice, len(alternatives)))  # recorded first: backtracking moves past it
        if alternatives[choice] is None or not self._admit(*alternatives[choice]):
            raise _DeadPath
        return choice

    def _feasible(self, constraints: tuple[Form, ...]) -> bool:
        touched = {v for c in constraints if len(c.coeffs) == 1 for v in c.variables}
        saved = {v: self.bounds[v] for v in touched}
        ok = all(self._bound(c) for c in constraints)
        self.bounds.update(saved)
        return ok

    def _admit(self, w: Fraction, constraints: tuple[Form, ...]) -> bool:
        if w == 0:
            return False
        self.weight *= w
        self.constraints.extend(constraints)
        return all(self._bound(c) for c in constraints)

    def _bound(self, c: Form) -> bool:
        """Record ``c > 0``; False when the constraints are certainly empty."""
        if len(c.coeffs) == 1:
            (v, a), = c.coeffs
            edge = -c.const / a
            lo, hi = self.bounds[v]
            if a > 0:
                lo = max(lo, edge)
            else:
                hi = min(hi, edge)
            self.bounds[v] = (lo, hi)
            return lo < hi
        sup = c.const
        for v, a in c.coeffs:
            end = self.bounds[v][1] if a > 0 else self.bounds[v][0]
            if end in (INF, -INF):
                return True
            sup += a * end
        return sup > 0

    # -- comparisons and choices (also used by events) --------------------------------
    def less(self, a: Value, b: Value, strict: bool = True) -> bool:
        """``a < b`` (``a <= b`` when not strict); branches when the difference is random."""
        if not isinstance(a, Form) and not isinstance(b, Form):
            return a < b if strict else a <= b
        key = (a, b)
        pair = self.spec.differences.get(key)
        if pair is None:
            d = sub(b, a)
            pair = self.spec.differences[key] = (d, neg(d)) if isinstance(d, Form) else (d, None)
        d, minus_d = pair
        if minus_d is None:
            return d > 0 if strict else d >= 0
        return self.branch([(ONE, (d,)), (ONE, (minus_d,))]) == 0

    def require(self, a: Value, b: Value, strict: bool = True) -> bool:
        """Keep only the part of the path where ``a < b`` (``a <= b``); False when it is certainly empty.

        For events that hold only if the comparison does: the other outcome weighs 0 and
        need not be explored.
        """
        if not isinstance(a, Form) and not isinstance(b, Form):
            return a < b if strict else a <= b
        d = sub(b, a)
        if not isinstance(d, Form):
            return d > 0 if strict else d >= 0
        self.branch([(ONE, (d,))])
        return True

    def expect(self, k: int, values: Sequence[Any]) -> None:
        """Declare that the caller weighs 0 every path on which output ``k`` is not in ``values``.

        When output ``k`` is an argmax not evaluated yet and ``values`` are indices, only the paths
        where one of those indices wins are explored: an event ``{index in S}`` needs ``|S|``
        winners' regions, not every winner's.  The paths it keeps are exactly those a full
        exploration keeps with the event holding (the same weights and constraints); the others
        would weigh 0.  Anything else is left as it is (the event decides as usual).
        """
        j = self.spec.outputs[k]
        if j in self.memo or self.spec.nodes[j].op != "argmax":
            return
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return
        self.wanted[j] = frozenset(values) & self.wanted.get(j, frozenset(values))

    def winner(self, values: Sequence[Value], ties: str = "first", among: frozenset[int] | None = None) -> int:
        """Index of the largest value: lowest index among exact ties, or uniform among them; with
        ``among``, only the paths where a member of ``among`` wins (the others are dropped)."""
        key = (tuple(values), ties, among)
        choice = self.spec.choices.get(key)
        if choice is None:  # the alternatives depend on the values only: every path shares them
            choice = self.spec.choices[key] = _argmax_alternatives(values, ties, among)
        members, alternatives = choice
        if not members:
            raise _DeadPath
        return members[self.branch(alternatives)]

    def loser(self, values: Sequence[Value]) -> int:
        """Index of the smallest value (lowest index among exact ties)."""
        return self.winner([neg(v) for v in values])

    # -- evaluation ------------------------------------------------------------------
    def value(self, i: int) -> Value:
        """The value of node ``i`` on this path (evaluating what it needs, lazily)."""
        memo, stack = self.memo, [i]
        while stack:
            j = stack[-1]
            if j in memo:
                stack.pop()
                continue
            need = self._missing(j)
            if need:
                stack.extend(need)
                continue
            v = self._compute(j)
            if self.spec.nodes[j].kind == FLOAT and isinstance(v, int) and not _is_bottom(v):
                v = Fraction(v)
            memo[j] = v
            stack.pop()
        return memo[i]

    def output(self, k: int) -> Value:
        return self.value(self.spec.outputs[k])

    def outputs(self) -> Any:
        vals = tuple(self.output(k) for k in range(len(self.spec.outputs)))
        return vals if self.spec.tuple_output else vals[0]

    def _missing(self, j: int) -> list[int]:
        n, memo = self.spec.nodes[j], self.memo
        if n.op == "ite":
            c = n.args[0]
            if c not in memo:
                return [c]
            chosen = n.args[1] if memo[c] else n.args[2]
            return [] if chosen in memo else [chosen]
        if n.op in ("and", "or"):
            a, b = n.args
            if a not in memo:
                return [a]
            if bool(memo[a]) == (n.op == "or"):
                return []
            return [] if b in memo else [b]
        if j in self.spec.int_compares and self._decided(n) is not None:
            return []
        args = self.spec.flat.get(j, n.args)
        missing = [a for a in args if a not in memo]
        if j in self.spec.int_compares and missing:
            return [self._first_missing(missing[0])]
        return missing

    # -- deciding integer comparisons from partial sums (a halted sparse vector's count) --
    def _interval(self, j: int, known: dict[int, tuple[Any, Any]]) -> tuple[Any, Any]:
        """Bounds on the integer value of node ``j`` from what is evaluated so far (``known``: bounds
        found earlier on this path, still valid because evaluated values never change)."""
        if j in self.memo:
            v = self.memo[j]
            return v, v
        if j in known:
            return known[j]
        n = self.spec.nodes[j]
        if n.op in ("add", "sub") and n.kind != FLOAT:
            (alo, ahi), (blo, bhi) = self._interval(n.args[0], known), self._interval(n.args[1], known)
            lo, hi = (alo + blo, ahi + bhi) if n.op == "add" else (alo - bhi, ahi - blo)
            if lo == hi:  # both operands known: remember the sum, so chains stay linear
                self.memo[j] = lo
            else:
                self.ranges[j] = (lo, hi)
            return lo, hi
        return n.lo, n.hi

    def _decided(self, n: Node) -> int | None:
        """The value of an integer comparison when the operands' bounds already decide it (tried first
        with the bounds found earlier on the path, which keeps a halted sparse vector's counts linear)."""
        for known in (self.ranges, {}):
            (alo, ahi), (blo, bhi) = self._interval(n.args[0], known), self._interval(n.args[1], known)
            if n.op == "lt":
                out = 1 if ahi < blo else 0 if alo >= bhi else None
            elif n.op == "le":
                out = 1 if ahi <= blo else 0 if alo > bhi else None
            else:
                out = (1 if n.op == "ne" else 0) if ahi < blo or bhi < alo else None
            if out is not None:
                return out
        return None

    def _first_missing(self, j: int) -> int:
        """The first unevaluated operand of the sum tree under ``j`` (evaluated in order)."""
        n = self.spec.nodes[j]
        while n.op in ("add", "sub") and n.kind != FLOAT:
            j = next(a for a in n.args if a not in self.memo)
            n = self.spec.nodes[j]
        return j

    def _compute(self, j: int) -> Value:
        n, memo = self.spec.nodes[j], self.memo
        op = n.op
        if op == "const":
            return _const(n.attr)
        if op in CONTINUOUS_NOISE:
            return Form.variable(j)
        if op == "draw":
            lo, weights = n.attr
            return lo + self.branch([(w, ()) if w else None for w in weights])
        if op == "ite":
            return memo[n.args[1]] if memo[n.args[0]] else memo[n.args[2]]
        if op in ("and", "or"):
            a = memo[n.args[0]]
            if bool(a) == (op == "or"):
                return 1 if a else 0
            return 1 if memo[n.args[1]] else 0
        if op in ("max", "min"):
            vals = [memo[a] for a in self.spec.flat[j]]
            if not any(isinstance(v, Form) for v in vals):
                return max(vals) if op == "max" else min(vals)
            return vals[self.winner(vals) if op == "max" else self.loser(vals)]
        if j in self.spec.int_compares:
            decided = self._decided(n)
            if decided is not None:
                return decided
        vals = [memo[a] for a in n.args]
        if not any(isinstance(v, Form) for v in vals):
            if op == "argmax":
                return self.winner(vals, n.attr, self.wanted.get(j))
            return evaluate(op, n.attr, vals)
        return self._symbolic(j, n, vals)

    def _symbolic(self, j: int, n: Node, vals: list[Value]) -> Value:
        """An operation with at least one random (Form) operand."""
        op = n.op
        if op == "add":
            return add(vals[0], vals[1])
        if op == "sub":
            return sub(vals[0], vals[1])
        if op == "neg":
            return neg(vals[0])
        if op == "mul":
            a, b = vals
            if isinstance(a, Form) and isinstance(b, Form):
                raise NonlinearProgram("the program multiplies two values that both depend on continuous "
                                       "noise; the continuous backend handles affine programs only")
            return scale(a, b) if isinstance(a, Form) else scale(b, a)
        if op == "abs":
            return vals[0] if self.less(0, vals[0], strict=False) else neg(vals[0])
        if op == "clamp":
            lo, hi = (Fraction(b) for b in n.attr)
            v = vals[0]
            if self.less(v, lo):
                return lo
            return hi if self.less(hi, v) else v
        if op in ("lt", "le"):
            return 1 if self.less(vals[0], vals[1], strict=op == "lt") else 0
        if op in ("eq", "ne"):  # a random difference is non-zero with probability one
            if any(_is_bottom(v) for v in vals):  # a released value is never bottom
                equal = False
            else:  # the same value on both sides (v == v) is equal surely
                d = sub(vals[0], vals[1])
                equal = not isinstance(d, Form) and d == 0
            return int(equal == (op == "eq"))
        if op == "argmax":
            return self.winner(vals, n.attr, self.wanted.get(j))
        raise NonlinearProgram(f"operation {op!r} on a continuous value is not supported by the continuous backend")


def _argmax_alternatives(values: Sequence[Value], ties: str,
                         among: frozenset[int] | None = None) -> tuple[list[int], list]:
    """The winners of an argmax (those in ``among`` only, when given) and, for each, its weight and
    the constraints that it beats every other value (None when a constant difference rules it out).

    Work: the grouping of equal values is linear, and each winner kept costs one constraint per
    other distinct value, so ``among`` of size ``m`` costs ``O(m n)`` instead of ``O(n^2)``.
    """
    index: dict[tuple[bool, Value], list[int]] = {}
    for i, v in enumerate(values):
        index.setdefault((isinstance(v, Form), v), []).append(i)
    groups = list(index.values())  # in order of first index, as each value's first index is
    alternatives: list[tuple[Fraction, tuple[Form, ...]] | None] = []
    members: list[int] = []
    for g in groups:
        picks = g if ties == "uniform" else g[:1]
        if among is not None and not among.intersection(picks):
            continue
        cons: list[Form] | None = []
        for h in groups:
            if h is g:
                continue
            d = sub(values[g[0]], values[h[0]])
            if isinstance(d, Form):
                cons.append(d)
            elif d < 0:
                cons = None
                break
        for i in picks:
            if among is None or i in among:
                members.append(i)
                alternatives.append(None if cons is None else (Fraction(1, len(picks)), tuple(cons)))
    return members, alternatives


@dataclass(frozen=True)
class Path:
    """One path: its exact weight, its region (constraints ``c > 0``) and what the body returned."""

    weight: Fraction
    constraints: tuple[Form, ...]
    result: Any


def explore(spec: Specialised, body: Callable[[Run], Any], *, max_paths: int = MAX_PATHS,
            start: Run | None = None) -> Iterator[Path]:
    """Every path of ``body(run)`` (depth first); ``body`` evaluates outputs and events on the run.

    A path whose ``body`` returns None is dropped (an event that does not hold).  With
    ``start`` (a finished run, see :func:`complete_runs`), every run goes on from its state
    and only the decisions ``body`` adds are enumerated: the paths are those a fresh
    exploration gives inside ``start``'s path, when ``body`` first reads what ``start`` read.
    """
    base = len(start.decisions) if start is not None else 0
    trace: list[int] = [c for c, _ in start.decisions] if start is not None else []
    runs = 0
    while True:
        runs += 1
        deadline.check("during symbolic execution")
        if runs > max_paths:
            raise BudgetExceeded(f"more than {max_paths} paths in the symbolic execution",
                                 limit="paths", value=max_paths)
        run = Run(spec, trace) if start is None else start.resumed(trace)
        try:
            result = body(run)
        except _DeadPath:
            result = None
        else:
            if result is not None:
                yield Path(run.weight, tuple(run.constraints), result)
        decisions, k = run.decisions, len(run.decisions)  # the run itself stays as it ended (complete_runs)
        while k > base and decisions[k - 1][0] + 1 >= decisions[k - 1][1]:
            k -= 1
        if k <= base:
            return
        trace = [c for c, _ in decisions[:k]]
        trace[-1] += 1


def complete_runs(spec: Specialised, *, max_paths: int = MAX_PATHS) -> list[Run]:
    """The finished runs of every path on which all outputs are evaluated, in order (depth first).

    An event that reads every output first, in order (a whole-output set event, or a product
    that starts with one), has exactly the paths that :func:`explore` with ``start=`` finds
    inside these runs: the same decisions in the same order, so the same regions; the program
    is executed once per input instead of once per event.
    """
    return [p.result for p in explore(spec, _finished, max_paths=max_paths)]


def _finished(run: Run) -> Run:
    run.outputs()
    return run
