"""Construction of IR node lists: validation, constant folding, sharing, replay.

:class:`Builder` is the one place where nodes are created, whether by tracing a Python
function or by rewriting an existing program (specialising inputs, lowering an
operation).  It checks every operation's operands, folds constants, simplifies using
ranges, and shares identical deterministic nodes.  A node that draws randomness (noise,
and an ``argmax`` that breaks ties uniformly at random) is never shared, folded into
another or merged on replay: two calls with the same arguments are independent draws.

Noise-free float arithmetic means what numpy computes in float64: the builder keeps such
an operation symbolic only where it is exact for every input of the declared domain, and
otherwise replaces it by its float64 value per input, or refuses (:mod:`samplers.lang.float64`).

Two-sided geometric noise has an unbounded support.  It may only reach the rest of the
program through ``clamp(offset + Z, lo, hi)``; the builder records the window of ``Z``
that each such clamp can distinguish, and :meth:`Builder.finish` replaces ``Z`` by a
finite law on the union of those windows with the tails folded onto its end points.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Sequence

from samplers import deadline
from samplers.errors import LanguageError
from samplers.lang.ir import (
    ARITY,
    BOTTOM,
    BOTTOM_CODE,
    COMPARE,
    CONTINUOUS_NOISE,
    FLOAT,
    INT,
    INT64_MAX,
    LOGIC,
    Node,
    draw_weights,
    evaluate,
    op_range,
    tied_maxima,
)
from samplers.lang.float64 import (
    CHOICE,
    TABLE_LIMIT,
    WORK_LIMIT,
    Grid,
    evaluate_exactly,
    is_negative_zero,
    op_grid,
    refuse_nan_choice,
    refuse_non_finite,
    value_grid,
)
from samplers.lang.noise import geometric_window
from samplers.numerals import count_text, short_text

INF = math.inf
CLOCK_EVERY = 4096  # nodes traced between two looks at the clock (samplers.deadline)

# Deterministic ops whose value only depends on argument values (foldable, shareable).
# ``argmax`` folds only when its constant arguments have a unique maximum (see _simplify).
_FOLDABLE = frozenset(ARITY) - {"const", "input", "draw", "geom"} - CONTINUOUS_NOISE | {"argmax"}


def draws_randomness(op: str, attr: Any) -> bool:
    """True for operations whose every evaluation is an independent random draw."""
    return op in ("draw", "geom") or op in CONTINUOUS_NOISE or (op == "argmax" and attr == "uniform")


def _same(v: Any, exact: Any) -> bool:
    """Whether a float64 result ``v`` is the exact result (BOTTOM only equals itself)."""
    return v is exact if BOTTOM in (v, exact) else Fraction(v) == exact


def _is_unbounded(n: Node) -> bool:
    return n.kind == INT and (n.lo == -INF or n.hi == INF)


class Builder:
    """Accumulates nodes in SSA order (see the module docstring)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._shared: dict[tuple, int] = {}
        # unbounded node -> (geometric noise node, offset node or None)
        self._affine: dict[int, tuple[int, int | None]] = {}
        # geometric noise node -> demanded window [zmin, zmax]
        self.windows: dict[int, tuple[int, int]] = {}
        # per node: whether its value depends on continuous noise or unbounded geometric noise (read as
        # real numbers); every other value ranges over finitely many inputs and draws (read as float64)
        self._real: list[bool] = []
        self._grids: dict[int, Grid] = {}  # noise-free float node -> the grid of its values
        # False: comparisons, min, max and clamp are never decided by their operands' ranges (a symbolic
        # loop iteration, samplers.lang.loop, whose state ranges hold for no particular n)
        self.decide_by_ranges = True

    # -- raw node creation -------------------------------------------------------------
    def _append(self, node: Node, key: tuple | None = None) -> int:
        if key is not None and key in self._shared:
            return self._shared[key]
        if node.kind == INT and not _is_unbounded(node) and node.lo <= node.hi and not (
                BOTTOM_CODE < node.lo and node.hi <= INT64_MAX):
            raise LanguageError(f"{node.op} can take values in [{short_text(str(node.lo))}, {short_text(str(node.hi))}], "
                                "outside the int64 "
                                "range of program values")
        self.nodes.append(node)
        self._real.append(node.op in CONTINUOUS_NOISE or node.op == "geom" or any(self._real[a] for a in node.args))
        i = len(self.nodes) - 1
        if i % CLOCK_EVERY == 0:
            deadline.check("while tracing the mechanism")
        if key is not None:
            self._shared[key] = i
        return i

    def const(self, value: Any) -> int:
        if value is BOTTOM:
            return self._append(Node("const", (), BOTTOM, 0, -1, INT, True), ("const", "bottom"))
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, float):
            # shared by its hex text: -0.0 == 0.0 yet they differ (repr, copysign, 1 / x); every NaN is "nan"
            return self._append(Node("const", (), value, value, value, FLOAT), ("const", "f", value.hex()))
        if isinstance(value, int):
            return self._append(Node("const", (), value, value, value, INT), ("const", "i", value))
        raise LanguageError(f"cannot use {value!r} (a {type(value).__name__}) as a program value")

    def input(self, index: int, lo: int, hi: int) -> int:
        return self._append(Node("input", (), index, lo, hi), ("input", index))

    def draw(self, lo: int, weights: Sequence[Fraction]) -> int:
        """A fresh discrete noise value with the exact law ``weights`` on ``lo, lo+1, ...``."""
        lo, w = draw_weights(lo, weights)
        if len(w) == 1:
            return self.const(lo)
        return self._append(Node("draw", (), (lo, w), lo, lo + len(w) - 1))

    def continuous(self, op: str, scale: float) -> int:
        lo = 0.0 if op == "exponential" else -INF
        return self._append(Node(op, (), scale, lo, INF, FLOAT))

    def geometric(self, a: Fraction) -> int:
        """A pending two-sided geometric noise (finite only once clamped; see module doc)."""
        if a == 0:
            return self.const(0)
        i = self._append(Node("geom", (), a, -INF, INF))
        self._affine[i] = (i, None)
        return i

    # -- checked operations ------------------------------------------------------------
    def emit(self, op: str, args: Sequence[int], attr: Any = None) -> int:
        """Add ``op(args; attr)``, validated, folded and shared where possible."""
        args = tuple(args)
        if op == "argmax":
            if len(args) < 1:
                raise LanguageError("argmax needs at least one value")
            if attr not in ("first", "uniform"):
                raise LanguageError(f"argmax ties must be 'first' or 'uniform', not {attr!r}")
        elif op not in ARITY or ARITY[op] != len(args) or op in ("const", "input", "draw", "geom"):
            raise LanguageError(f"malformed operation {op}/{len(args)}")
        nodes = [self.nodes[a] for a in args]
        if any(_is_unbounded(n) for n in nodes):
            return self._unbounded(op, args, attr, nodes)
        self._check_operands(op, attr, nodes)
        simplified = self._simplify(op, args, attr, nodes)
        if simplified is not None:
            return simplified
        lo, hi, kind = op_range(op, attr, nodes)
        bottom = op == "ite" and (nodes[1].bottom or nodes[2].bottom)
        grid = None
        if FLOAT in (kind, *(n.kind for n in nodes)) and not draws_randomness(op, attr) and not any(
                self._real[a] for a in args):
            grid = self._float64(op, args, attr, nodes, kind)
            if isinstance(grid, int):
                return grid  # the operation's float64 values, tabulated
        if kind == INT and not bottom and lo == hi:
            return self.const(int(lo))
        key = None if draws_randomness(op, attr) else (op, args, attr)
        i = self._append(Node(op, args, attr, lo, hi, kind, bottom), key)
        if grid is not None and kind == FLOAT:
            self._grids[i] = grid
        return i

    # -- float64 semantics of noise-free values (see samplers.lang.float64) -------------
    def _grid(self, i: int) -> Grid | None:
        n = self.nodes[i]
        if n.bottom and n.is_const:
            return Grid(0, 0)
        if n.kind == INT:
            return Grid(0, max(abs(int(n.lo)), abs(int(n.hi))) if n.lo <= n.hi else 0)
        if n.is_const:
            return value_grid([n.attr]) if math.isfinite(n.attr) else None  # inf, nan: no grid, evaluated
        return self._grids.get(i)

    def _float64(self, op: str, args: tuple[int, ...], attr: Any, nodes: list[Node], kind: str) -> Grid | int:
        """The grid proving ``op`` exact on noise-free operands, or the node of its float64 table."""
        grids = [self._grid(a) for a in args]
        if op in COMPARE and any(n.kind == INT and g.bound > 2**53 for n, g in zip(nodes, grids)):
            raise LanguageError(f"{op} compares an integer beyond 2^53 with a float: numpy rounds the integer to "
                                "float64 first, Python compares exactly; convert it explicitly")
        grid = None if None in grids else op_grid(op, attr, grids, nodes)
        if grid is not None and (grid.doubles or (op in CHOICE and all(
                n.kind == FLOAT or g.bound <= 2**53 for n, g in zip(nodes, grids)))):
            return grid  # a choice among doubles (integers below 2^53 included) is one of them: exact
        table = dict(self._per_combination(args, lambda vals: self._float_value(op, attr, vals, kind), op))
        if all(_same(v, evaluate_exactly(op, attr, vals)) for v, vals in table.values()):
            return value_grid(v for v, _ in table.values() if v is not BOTTOM)
        return self._table(self._variables(self._cone(args)), {combo: v for combo, (v, _) in table.items()}, ())

    @staticmethod
    def _float_value(op: str, attr: Any, vals: list[Any], kind: str) -> Any:
        v = evaluate(op, attr, vals)
        v = float(v) if kind == FLOAT and v is not BOTTOM else v  # numpy's float64 result, also where Python keeps an int
        if isinstance(v, float) and not math.isfinite(v):
            raise LanguageError(f"{op} gives {v} in float64 for some input of the declared domain")
        return v

    def _is_variable(self, i: int) -> bool:
        """Inputs and discrete draws (a uniform argmax's tie-break too): the values a table ranges over."""
        n = self.nodes[i]
        return n.op == "input" or draws_randomness(n.op, n.attr)

    def _cone(self, args: Iterable[int]) -> list[int]:
        """The nodes ``args`` depend on up to variables, in order (none reads continuous noise)."""
        seen: set[int] = set()
        stack = list(args)
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                if not self._is_variable(i):
                    stack.extend(self.nodes[i].args)
        return sorted(seen)

    def _variables(self, cone: Iterable[int]) -> list[int]:
        """The cone's variables, inputs first (by index), then draws (by node)."""
        return sorted((d for d in cone if self._is_variable(d)),
                      key=lambda d: (0, self.nodes[d].attr) if self.nodes[d].op == "input" else (1, d))

    def _per_combination(self, args: Sequence[int], value: Callable[[list[Any]], Any],
                   op: str) -> Iterator[tuple[tuple[int, ...], tuple[Any, list[Any]]]]:
        """For each combination of the variables' values: ``(combo, (value(operand values), operand values))``, in float64."""
        cone = self._cone(args)
        deps = self._variables(cone)
        total = math.prod(self.nodes[d].width() for d in deps)
        if total > TABLE_LIMIT or total * len(cone) > WORK_LIMIT:
            raise LanguageError(
                f"float64 rounding: {op} is not proved exact for every input of the declared domain and depends "
                f"on {len(deps)} inputs and draws ({count_text(total)} combinations; at most {TABLE_LIMIT:,} are evaluated "
                "one by one in float64): compute on integers, scale by powers of two, or narrow the domain")
        for combo in itertools.product(*(range(int(self.nodes[d].lo), int(self.nodes[d].hi) + 1) for d in deps)):
            vals: dict[int, Any] = dict(zip(deps, combo))
            for j in cone:
                n = self.nodes[j]
                if j not in vals:
                    vals[j] = evaluate(n.op, n.attr, [vals[a] for a in n.args])
            operands = [vals[a] for a in args]
            yield combo, (value(operands), operands)

    def _table(self, deps: Sequence[int], table: dict[tuple[int, ...], Any], prefix: tuple[int, ...]) -> int:
        """Nested ``ite`` on the inputs ``deps`` selecting ``table[values]`` (runs of equal values merged)."""
        if len(prefix) == len(deps):
            return self.const(table[prefix])
        d = deps[len(prefix)]
        runs: list[tuple[int, int]] = []  # (last input value of the run, its node)
        for v in range(int(self.nodes[d].lo), int(self.nodes[d].hi) + 1):
            child = self._table(deps, table, prefix + (v,))
            if runs and runs[-1][1] == child:
                runs[-1] = (v, child)
            else:
                runs.append((v, child))
        return self._split(d, runs)

    def _split(self, d: int, runs: Sequence[tuple[int, int]]) -> int:
        """A balanced tree of ``ite(d <= end, ...)`` over consecutive runs: depth log2(runs), not runs
        (a chain of thousands of ``ite`` nests too deeply for the backends' recursive walks)."""
        if len(runs) == 1:
            return runs[0][1]
        mid = len(runs) // 2
        left, right = self._split(d, runs[:mid]), self._split(d, runs[mid:])
        return self.emit("ite", (self.emit("le", (d, self.const(runs[mid - 1][0]))), left, right))

    def _check_signed_zeros(self, outputs: Sequence[int]) -> None:
        """Refuse a noise-free float output that is -0.0 for some inputs and 0.0 for others.

        The caller tells them apart (``repr``, ``math.copysign``); program values cannot.
        """
        for o in outputs:
            n, g = self.nodes[o], self._grid(o)
            if n.kind != FLOAT or self._real[o] or (g is not None and not g.negzero):
                continue
            signs = {is_negative_zero(v) for _, (v, _) in self._per_combination((o,), lambda vals: vals[0], "an output")
                     if v == 0}
            if len(signs) > 1:
                raise LanguageError("an output is -0.0 for some inputs and 0.0 for others: the caller tells them "
                                    "apart, the program's values cannot; add 0.0 to it to make every zero +0.0")

    def _check_operands(self, op: str, attr: Any, nodes: list[Node]) -> None:
        for pos, n in enumerate(nodes):
            if n.bottom and not (op in ("eq", "ne") or (op == "ite" and pos > 0)):
                raise LanguageError(f"bottom (⊥) can only be output, compared or chosen by ite, not used in {op}")
        if op in LOGIC and not all(n.is_bool for n in nodes):
            raise LanguageError(f"{op} needs boolean (0/1) operands; use comparisons to make them")
        if op == "ite" and not nodes[0].is_bool:
            raise LanguageError("ite(cond, a, b): cond must be boolean (a comparison or a flip)")
        if op in ("floordiv", "mod"):
            if nodes[0].kind != INT:
                raise LanguageError(f"{op} needs an integer operand")
            if not isinstance(attr, int) or isinstance(attr, bool) or attr <= 0:
                raise LanguageError(f"{op} needs a positive integer constant divisor, got {attr!r}")
        if op == "clamp":
            lo, hi = attr
            if lo > hi:
                raise LanguageError(f"clamp(v, lo, hi): lo = {lo} exceeds hi = {hi}")
            if nodes[0].kind == INT and not (isinstance(lo, int) and isinstance(hi, int)):
                raise LanguageError("clamp of an integer value needs integer bounds")

    def _simplify(self, op: str, args: tuple[int, ...], attr: Any, nodes: list[Node]) -> int | None:
        """Constant folding and range-based simplification; None when nothing applies."""
        if op in _FOLDABLE and all(n.is_const for n in nodes):
            vals = [n.attr for n in nodes]
            refuse_nan_choice(op, vals)
            if op == "argmax" and attr == "uniform" and len(tied_maxima(vals)) > 1:
                return None
            return self.const(evaluate(op, attr, vals))
        if op == "ite":
            c, a, b = nodes
            if c.is_const:
                return args[1] if c.attr else args[2]
            if args[1] == args[2]:
                return args[1]
        if op in ("and", "or"):
            for k, n in enumerate(nodes):
                if n.is_const:
                    absorbing = 0 if op == "and" else 1
                    return self.const(absorbing) if n.attr == absorbing else args[1 - k]
        if op in ("add", "sub", "mul") and all(n.kind == INT for n in nodes):
            neutral = 1 if op == "mul" else 0
            if nodes[1].is_const and nodes[1].attr == neutral:
                return args[0]
            if op != "sub" and nodes[0].is_const and nodes[0].attr == neutral:
                return args[1]
        if not self.decide_by_ranges:
            return None
        if op == "clamp":
            lo, hi = attr
            n = nodes[0]
            if lo <= n.lo and n.hi <= hi:
                return args[0]
        if op in COMPARE and all(n.kind == INT and not n.bottom for n in nodes):
            a, b = nodes
            decided = {
                "lt": (a.hi < b.lo, a.lo >= b.hi),
                "le": (a.hi <= b.lo, a.lo > b.hi),
                "eq": (False, a.hi < b.lo or b.hi < a.lo),
                "ne": (a.hi < b.lo or b.hi < a.lo, False),
            }[op]
            if decided[0]:
                return self.const(1)
            if decided[1]:
                return self.const(0)
        if op in ("min", "max") and all(n.kind == INT for n in nodes):
            a, b = nodes
            if a.hi <= b.lo:
                return args[0] if op == "min" else args[1]
            if b.hi <= a.lo:
                return args[1] if op == "min" else args[0]
        return None

    def _unbounded(self, op: str, args: tuple[int, ...], attr: Any, nodes: list[Node]) -> int:
        """Operations allowed on ``offset + Z`` with Z two-sided geometric (see module doc)."""
        hint = "write clamp(x + two_sided_geometric(a), lo, hi)"
        ub = [k for k, n in enumerate(nodes) if _is_unbounded(n)]
        if op == "clamp":
            geo, off = self._affine[args[0]]
            olo, ohi = (0, 0) if off is None else (self.nodes[off].lo, self.nodes[off].hi)
            lo, hi = attr
            if not (isinstance(lo, int) and isinstance(hi, int)) or lo > hi:
                raise LanguageError("clamp of geometric noise needs integer bounds lo <= hi")
            zmin, zmax = lo - ohi, hi - olo
            old = self.windows.get(geo)
            self.windows[geo] = (zmin, zmax) if old is None else (min(old[0], zmin), max(old[1], zmax))
            return self._append(Node("clamp", args, attr, lo, hi), ("clamp", args, attr))
        if op in ("add", "sub") and len(ub) == 1 and not (op == "sub" and ub[0] == 1):
            other = args[1 - ub[0]]
            if self.nodes[other].kind != INT or self.nodes[other].bottom:
                raise LanguageError(f"geometric noise can only be shifted by integers; {hint}")
            geo, off = self._affine[args[ub[0]]]
            if op == "sub":
                other = self.emit("neg", (other,))
            new_off = other if off is None else self.emit("add", (off, other))
            i = self._append(Node("add", (new_off, geo), None, -INF, INF), ("add", (new_off, geo), None))
            self._affine[i] = (geo, new_off)
            return i
        raise LanguageError(f"two-sided geometric noise is unbounded and cannot be used in {op}; {hint}")

    # -- finishing and replaying -------------------------------------------------------
    def finish(self, outputs: Sequence[int]) -> tuple[list[Node], list[int]]:
        """Resolve pending geometric noise to finite laws and drop unused nodes; refuse an output that
        tells -0.0 from 0.0 and an inf or NaN constant left beside continuous noise."""
        for o in outputs:
            if _is_unbounded(self.nodes[o]):
                raise LanguageError("an output is unbounded geometric noise; clamp it first")
        self._check_signed_zeros(outputs)

        def resolve(node: Node, new_args: tuple[int, ...], b: Builder, old: int) -> int | None:
            if node.op == "geom":
                zmin, zmax = self.windows[old]
                return b.draw(*geometric_window(node.attr, zmin, zmax))
            return None

        if self.settled(outputs):  # replaying it would give the same nodes: 1.2 s at 300,000 nodes
            nodes, outs = list(self.nodes), list(outputs)
        else:
            nodes, outs = replay(self.nodes, outputs, rewrite=resolve)
        refuse_non_finite(nodes)
        return nodes, outs

    def settled(self, outputs: Sequence[int]) -> bool:
        """Whether the nodes are final as they are: no geometric noise to resolve and every node
        used by an output (this builder folded and shared them as it made them, so a replay would
        make the same ones again)."""
        return not any(n.op == "geom" for n in self.nodes) and all(live_nodes(self.nodes, outputs))


Rewrite = Callable[[Node, tuple[int, ...], Builder, int], "int | None"]


def live_nodes(nodes: Sequence[Node], outputs: Iterable[int]) -> list[bool]:
    """Which nodes the outputs depend on."""
    live = [False] * len(nodes)
    stack = list(outputs)
    while stack:
        i = stack.pop()
        if not live[i]:
            live[i] = True
            stack.extend(nodes[i].args)
    return live


def replay(
    nodes: Sequence[Node],
    outputs: Sequence[int],
    *,
    rewrite: Rewrite | None = None,
    inputs: Sequence[int] | None = None,
) -> tuple[list[Node], list[int]]:
    """Rebuild the live part of a node list through a fresh :class:`Builder`.

    ``inputs`` replaces input nodes by constants (specialisation); ``rewrite`` may take
    over any node (returning its new id) or decline (returning None).  Folding and
    sharing happen again, so the result is as small as the builder can make it.
    """
    b = Builder()
    live = live_nodes(nodes, outputs)
    new: dict[int, int] = {}
    for i, node in enumerate(nodes):
        if not live[i]:
            continue
        args = tuple(new[a] for a in node.args)
        done = rewrite(node, args, b, i) if rewrite is not None else None
        if done is not None:
            new[i] = done
        elif node.op == "const":
            new[i] = b.const(node.attr)
        elif node.op == "input":
            new[i] = b.const(inputs[node.attr]) if inputs is not None else b.input(node.attr, node.lo, node.hi)
        elif node.op == "draw":
            new[i] = b.draw(*node.attr)
        elif node.op in CONTINUOUS_NOISE:
            new[i] = b.continuous(node.op, node.attr)
        elif node.op == "geom":
            raise LanguageError("internal: unresolved geometric noise in replay")
        else:
            new[i] = b.emit(node.op, args, node.attr)
    outs = [new[o] for o in outputs]
    # A second pass drops nodes that folding made dead.
    if len(b.nodes) and not all(live_nodes(b.nodes, outs)):
        return replay(b.nodes, outs)
    return b.nodes, outs
