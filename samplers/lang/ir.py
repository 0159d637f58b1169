"""The typed IR that every backend consumes.

A program is a DAG in SSA form: a tuple of :class:`Node` in topological order, each
node naming its operation, its argument node ids, a hashable attribute and the finite
range ``[lo, hi]`` its integer values lie in (continuous values have kind ``float`` and
may have infinite bounds).  A node may also be able to take the special value
:data:`BOTTOM` (a halted mechanism's output), recorded in ``bottom``.

This module holds the semantics of the deterministic operations (:func:`evaluate`)
and their range rules (:func:`op_range`), so that tracing, constant folding and the
exact enumerator share one definition of what each operation means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

from samplers.errors import LanguageError

INT = "int"
FLOAT = "float"


class _Bottom:
    """The "bottom" output of a halted mechanism: a value no program computes.

    It equals only itself (never an integer: JSON's ``-9223372036854775808`` is not
    bottom; only the string ``"bottom"`` is), sorts below every number so outputs stay
    orderable, and pickles as the one instance.  Sampler arrays are int64, where
    :data:`BOTTOM_CODE` stands for it; the builder keeps every program value strictly
    inside the int64 range, so that code is never a program value either.
    """

    __slots__ = ()
    _instance: "_Bottom | None" = None

    def __new__(cls) -> "_Bottom":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "⊥"

    __str__ = __repr__

    def __reduce__(self) -> str:
        return "BOTTOM"

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    def __hash__(self) -> int:
        return hash("dphybrid.BOTTOM")

    def __lt__(self, other: object) -> bool:
        return other is not self

    def __le__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return False

    def __ge__(self, other: object) -> bool:
        return other is self


BOTTOM = _Bottom()
BOTTOM_CODE = -(2**63)  # BOTTOM in int64 sampler arrays
INT64_MAX = 2**63 - 1


def to_code(v: Any) -> Any:
    """An output value (or tuple) as it appears in int64 sampler arrays."""
    if isinstance(v, tuple):
        return tuple(to_code(e) for e in v)
    return BOTTOM_CODE if v is BOTTOM else v


def from_code(v: Any) -> Any:
    """A sampler array entry as an output value: :data:`BOTTOM_CODE` becomes BOTTOM."""
    v = int(v)
    return BOTTOM if v == BOTTOM_CODE else v


# Operation groups.  ``RANDOM_OPS`` draw fresh randomness each time they are evaluated.
DISCRETE_NOISE = frozenset({"draw"})
CONTINUOUS_NOISE = frozenset({"laplace", "exponential", "gaussian"})
RANDOM_OPS = DISCRETE_NOISE | CONTINUOUS_NOISE | {"geom"}
ARITH = frozenset({"add", "sub", "mul", "neg", "abs", "min", "max", "clamp", "floordiv", "mod"})
COMPARE = frozenset({"lt", "le", "eq", "ne"})
LOGIC = frozenset({"and", "or", "xor", "not"})
ALL_OPS = (
    RANDOM_OPS | ARITH | COMPARE | LOGIC | {"const", "input", "ite", "argmax"}
)
ARITY = {
    "const": 0, "input": 0, "draw": 0, "geom": 0, "laplace": 0, "exponential": 0,
    "gaussian": 0, "neg": 1, "abs": 1, "clamp": 1, "floordiv": 1, "mod": 1, "not": 1,
    "add": 2, "sub": 2, "mul": 2, "min": 2, "max": 2, "lt": 2, "le": 2, "eq": 2,
    "ne": 2, "and": 2, "or": 2, "xor": 2, "ite": 3,
}  # argmax is variadic


@dataclass(frozen=True, slots=True)
class Node:
    """One SSA value: ``op(args; attr)`` with values in ``[lo, hi]`` (or BOTTOM if ``bottom``)."""

    op: str
    args: tuple[int, ...]
    attr: Any
    lo: int | float
    hi: int | float
    kind: str = INT
    bottom: bool = False

    @property
    def is_bool(self) -> bool:
        return self.kind == INT and not self.bottom and 0 <= self.lo and self.hi <= 1

    @property
    def is_const(self) -> bool:
        return self.op == "const"

    def width(self) -> int:
        """Number of integer values in the range (0 for an empty range)."""
        return max(0, int(self.hi) - int(self.lo) + 1)


@dataclass(frozen=True)
class Program:
    """A traced mechanism: nodes, outputs and the declared input domain and neighbours."""

    name: str
    params: tuple[tuple[str, Any], ...]
    nodes: tuple[Node, ...]
    outputs: tuple[int, ...]
    tuple_output: bool
    domain: Any  # samplers.lang.domain.Domain
    neighbours: Any  # samplers.lang.neighbours.Neighbours
    _meta: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def continuous(self) -> bool:
        """True when the program draws continuous noise (no exact backend can handle it)."""
        return any(n.op in CONTINUOUS_NOISE for n in self.nodes)

    @property
    def output_kind(self) -> str:
        return FLOAT if any(self.nodes[i].kind == FLOAT for i in self.outputs) else INT

    @property
    def arity(self) -> int:
        """Number of components of the output (1 for a scalar output)."""
        return len(self.outputs)

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def output_nodes(self) -> list[Node]:
        return [self.nodes[i] for i in self.outputs]

    @property
    def output_space(self) -> int:
        """An upper bound on the number of distinct outputs (the product of the ranges)."""
        return math.prod(n.width() + n.bottom for n in self.output_nodes())

    def noise_nodes(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.op in RANDOM_OPS]

    def users(self) -> list[list[int]]:
        """For each node, the ids of the nodes that use it."""
        out: list[list[int]] = [[] for _ in self.nodes]
        for i, n in enumerate(self.nodes):
            for a in n.args:
                out[a].append(i)
        return out

    def describe(self) -> str:
        """A readable listing of the IR (one node per line), for debugging and docs."""
        lines = []
        for i, n in enumerate(self.nodes):
            attr = "" if n.attr is None else f" {n.attr!r}"
            args = ", ".join(f"%{a}" for a in n.args)
            b = " | ⊥" if n.bottom else ""
            lines.append(f"%{i} = {n.op}({args}){attr} : {n.kind}[{n.lo}, {n.hi}]{b}")
        outs = ", ".join(f"%{o}" for o in self.outputs)
        lines.append(f"return ({outs})" if self.tuple_output else f"return {outs}")
        return "\n".join(lines)


def _bool(v: Any) -> int:
    return 1 if v else 0


def evaluate(op: str, attr: Any, vals: Sequence[Any]) -> Any:
    """The value of a deterministic operation on concrete argument values.

    ``argmax`` evaluates with lowest-index tie-breaking; callers handle the uniform
    tie-break (it is random) themselves.
    """
    if op == "const":
        return attr
    if op == "add":
        return vals[0] + vals[1]
    if op == "sub":
        return vals[0] - vals[1]
    if op == "mul":
        return vals[0] * vals[1]
    if op == "neg":
        return -vals[0]
    if op == "abs":
        return abs(vals[0])
    if op == "min":
        return min(vals[0], vals[1])
    if op == "max":
        return max(vals[0], vals[1])
    if op == "clamp":
        lo, hi = attr
        return min(max(vals[0], lo), hi)
    if op == "floordiv":
        return vals[0] // attr
    if op == "mod":
        return vals[0] % attr
    if op == "lt":
        return _bool(vals[0] < vals[1])
    if op == "le":
        return _bool(vals[0] <= vals[1])
    if op == "eq":
        return _bool(vals[0] == vals[1])
    if op == "ne":
        return _bool(vals[0] != vals[1])
    if op == "and":
        return _bool(vals[0] and vals[1])
    if op == "or":
        return _bool(vals[0] or vals[1])
    if op == "xor":
        return _bool(bool(vals[0]) != bool(vals[1]))
    if op == "not":
        return _bool(not vals[0])
    if op == "ite":
        return vals[1] if vals[0] else vals[2]
    if op == "argmax":
        return max(range(len(vals)), key=lambda i: (vals[i], -i))
    raise LanguageError(f"operation {op!r} is not deterministic")


def tied_maxima(vals: Sequence[Any]) -> list[int]:
    """Indices attaining the maximum (the candidates of a uniform argmax tie-break)."""
    top = max(vals)
    return [i for i, v in enumerate(vals) if v == top]


def draw_weights(lo: int, weights: Sequence[Fraction]) -> tuple[int, tuple[Fraction, ...]]:
    """Normalise a finite law on ``lo, lo+1, ...``: drop zero weights at both ends."""
    w = list(weights)
    while w and w[-1] == 0:
        w.pop()
    start = 0
    while start < len(w) and w[start] == 0:
        start += 1
    if not w[start:]:
        raise LanguageError("a noise law must give positive probability to some value")
    return lo + start, tuple(w[start:])


def _union(ranges: Sequence[tuple[Any, Any]]) -> tuple[Any, Any]:
    nonempty = [r for r in ranges if r[0] <= r[1]]
    if not nonempty:
        return 0, -1
    return min(r[0] for r in nonempty), max(r[1] for r in nonempty)


def _mul_range(a: Node, b: Node) -> tuple[Any, Any]:
    prods = []
    for x in (a.lo, a.hi):
        for y in (b.lo, b.hi):
            p = x * y
            prods.append(0 if (isinstance(p, float) and math.isnan(p)) else p)
    return min(prods), max(prods)


def op_range(op: str, attr: Any, args: Sequence[Node]) -> tuple[Any, Any, str]:
    """Range ``(lo, hi)`` and kind of ``op`` applied to arguments with the given ranges."""
    kinds = {a.kind for a in args}
    kind = FLOAT if FLOAT in kinds else INT
    if op in COMPARE or op in LOGIC:
        return 0, 1, INT
    if op == "argmax":
        return 0, len(args) - 1, INT
    if op == "ite":
        kind = FLOAT if FLOAT in {args[1].kind, args[2].kind} else INT
        lo, hi = _union([(args[1].lo, args[1].hi), (args[2].lo, args[2].hi)])
        return lo, hi, kind
    a = args[0]
    if op == "neg":
        return -a.hi, -a.lo, kind
    if op == "abs":
        if a.lo >= 0:
            return a.lo, a.hi, kind
        if a.hi <= 0:
            return -a.hi, -a.lo, kind
        return 0, max(-a.lo, a.hi), kind
    if op == "clamp":
        lo, hi = attr
        return min(max(a.lo, lo), hi), min(max(a.hi, lo), hi), kind
    if op == "floordiv":
        return a.lo // attr, a.hi // attr, kind
    if op == "mod":
        if a.lo // attr == a.hi // attr:
            return a.lo % attr, a.hi % attr, kind
        return 0, attr - 1, kind
    b = args[1]
    if op == "add":
        return a.lo + b.lo, a.hi + b.hi, kind
    if op == "sub":
        return a.lo - b.hi, a.hi - b.lo, kind
    if op == "mul":
        lo, hi = _mul_range(a, b)
        return lo, hi, kind
    if op == "min":
        return min(a.lo, b.lo), min(a.hi, b.hi), kind
    if op == "max":
        return max(a.lo, b.lo), max(a.hi, b.hi), kind
    raise LanguageError(f"no range rule for operation {op!r}")
