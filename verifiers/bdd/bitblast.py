"""Bit-blasting the IR into ``dd`` BDDs: values as maps from each value to its condition.

Every IR integer value has a small known range, so a value is held as a *value map*
``{v: BDD}``: the condition, over input bits and noise bits, under which it equals
``v`` (conditions are disjoint and cover everything).  An operation combines the maps
of its arguments with :func:`samplers.lang.ir.evaluate`, so the BDD semantics is the
interpreter's by construction, BOTTOM included (it is just one more value).

Variables:
- noise: a ``draw`` with law ``w_0..w_{k-1}`` becomes a chain of conditional flips
  ``b_j`` (``Z = j`` given ``Z >= j``, probability ``w_j / (w_j + ... + w_{k-1})``);
- inputs: coordinate ``i`` is ``x_i - lo`` in binary, left symbolic (restricted later
  by cofactoring), declared where it is first used;
- outputs: component ``j`` is the index of its value in the sorted list of values it
  can take, in binary, declared right after the node computing it.

Nodes are visited output by output (:func:`cone_order`) and variables declared in order
of first use, which interleaves them by record (x_i, its noise, its output bit) and
keeps randomized response and RAPPOR linear in n; CUDD's dynamic
reordering can be asked for while building (``reorder``) and is switched off
afterwards, so the order is fixed for counting.  The result is the *relation* ``R(x, z, o)``: output
bits ``o`` encode the program's output on input ``x`` and noise ``z``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Sequence

from samplers import deadline
from samplers.errors import BudgetExceeded, ParameterError, UnsupportedByBackend
from samplers.lang.ir import Node, Program, evaluate
from verifiers.bdd.lower import lower_argmax

DEFAULT_NODE_BUDGET = 2_000_000
# Counting the manager's live nodes walks its whole unique table (every variable's
# slots), so it is done after IR nodes 1, 2, 4, ..., every 256th and at the end: the
# budget may be overshot by what the nodes in between build.
BUDGET_CHECK_EVERY = 256
# Inside one operation, the conditions of its argument values are combined pairwise;
# every this many combinations the node budget is checked (the clock before each).
COMBO_CHECK_EVERY = 1024


LIBRARIES = ("dd.cudd", "dd.autoref")


def bdd_library(name: str | None = None) -> tuple[Any, str]:
    """The ``dd`` module ``name``; by default ``dd.cudd`` where it imports, else ``dd.autoref``."""
    if name is not None and name not in LIBRARIES:
        raise ParameterError(f"unknown BDD library {name!r} (known: {', '.join(LIBRARIES)})")
    if name in (None, "dd.cudd"):
        try:
            import dd.cudd as lib
            return lib, lib.__name__
        except ImportError:  # pragma: no cover - depends on the installed wheel
            if name is not None:
                raise UnsupportedByBackend("dd.cudd is not installed (pip install dd builds it on Linux)")
    import dd.autoref as lib
    return lib, lib.__name__


def regular_id(library: str):
    """The id of the regular (non-complemented) node of a ``dd`` function."""
    if library == "dd.cudd":
        return lambda f: int(f) & ~1  # the complement bit is the pointer's lowest bit
    return lambda f: abs(int(f))


@dataclass
class Compiled:
    """A program bit-blasted into one BDD manager (see the module docstring).

    ``output_maps[j]`` is the value map of output component ``j``; the relation over
    the output bits is built from them on first use (an event over a few outputs is
    counted from the value maps alone).
    """

    bdd: Any
    library: str
    output_maps: list[dict[int, Any]]
    input_bits: list[list[str]]  # per coordinate, least significant bit first
    input_lo: list[int]
    output_values: list[list[int]]  # per component, the values in code order
    output_bits: list[list[str]]  # per component, most significant bit first
    noise: dict[str, tuple[int, int]] = field(default_factory=dict)  # var -> integer weights
    _relation: Any = None

    @property
    def relation(self) -> Any:
        """``R(x, z, o)``: the output bits ``o`` encode the output on input x and noise z."""
        if self._relation is None:
            rel = self.bdd.true
            for vmap, values, names in zip(self.output_maps, self.output_values, self.output_bits):
                part = self.bdd.false
                for code, v in enumerate(values):
                    deadline.check("while building the BDD relation")
                    part |= self.bdd.cube({n: bool(code >> k & 1) for k, n in enumerate(reversed(names))}) & vmap[v]
                rel &= part
            self._relation = rel
        return self._relation

    @property
    def size(self) -> int:
        """Nodes of the relation BDD."""
        return len(self.relation)

    def event(self, vals: Sequence[Any]) -> Any:
        """The condition (over inputs and noise) that the output components equal ``vals``."""
        u = self.bdd.true
        for v, vmap in zip(vals, self.output_maps):
            u &= vmap.get(v, self.bdd.false)
        return u

    def input_assignment(self, x: Sequence[int]) -> dict[str, bool]:
        """The input bits of the domain point ``x``."""
        out = {}
        for bits, lo, v in zip(self.input_bits, self.input_lo, x):
            for k, name in enumerate(bits):
                out[name] = bool((v - lo) >> k & 1)
        return out

    def decode(self, bits: dict[str, int]) -> Any:
        """The output value whose code is ``bits`` (None for an unused code)."""
        vals = []
        for values, names in zip(self.output_values, self.output_bits):
            code = 0
            for name in names:
                code = 2 * code + bits[name]
            if code >= len(values):
                return None
            vals.append(values[code])
        return vals

    def encode(self, vals: Sequence[Any]) -> dict[str, int] | None:
        """The output bits of the output component values ``vals`` (None if impossible)."""
        bits: dict[str, int] = {}
        for v, values, names in zip(vals, self.output_values, self.output_bits):
            try:
                code = values.index(v)
            except ValueError:
                return None
            for k, name in enumerate(reversed(names)):
                bits[name] = code >> k & 1
        return bits


def _width(count: int) -> int:
    return max(0, (count - 1).bit_length())


class _Blaster:
    def __init__(self, program: Program, node_budget: int, reorder: bool, library: str | None) -> None:
        lib, self.library = bdd_library(library)
        # a soft memory target and a small first cache: CUDD grows both as needed, and a
        # manager then starts in about a millisecond instead of several
        self.bdd = lib.BDD(memory_estimate=2**28, initial_cache_size=2**12) if self.library == "dd.cudd" else lib.BDD()
        self.reorder = bool(reorder) and self.library == "dd.cudd"
        self.bdd.configure(reordering=self.reorder)
        self.program = cone_order(lower_argmax(program))
        self.where = f"while bit-blasting {program.name} into a BDD"
        self.budget = node_budget
        self.true, self.false = self.bdd.true, self.bdd.false
        self.noise: dict[str, tuple[int, int]] = {}
        dom = program.domain
        self.input_lo = list(dom.lo)
        self.input_bits: list[list[str]] = [[] for _ in dom.lo]
        self.input_maps: dict[int, dict[int, Any]] = {}

    def declare(self, name: str) -> Any:
        self.bdd.declare(name)
        return self.bdd.var(name)

    def cube(self, names: Sequence[str], code: int) -> Any:
        """The conjunction fixing ``names`` (most significant first) to ``code``."""
        c = self.true
        for k, name in enumerate(reversed(names)):
            v = self.bdd.var(name)
            c &= v if code >> k & 1 else ~v
        return c

    def input_map(self, i: int) -> dict[int, Any]:
        if i not in self.input_maps:
            lo, hi = self.program.domain.lo[i], self.program.domain.hi[i]
            names = [f"x{i}_{k}" for k in range(_width(hi - lo + 1))]
            for name in names:
                self.declare(name)
            self.input_bits[i] = names
            self.input_maps[i] = {lo + c: self.cube(names[::-1], c) for c in range(hi - lo + 1)}
        return self.input_maps[i]

    def draw(self, i: int, node: Node) -> dict[int, Any]:
        lo, weights = node.attr
        support = [(lo + j, w) for j, w in enumerate(weights) if w]
        out: dict[int, Any] = {}
        rest, mass = self.true, sum(w for _, w in support)
        for j, (v, w) in enumerate(support[:-1]):
            p = Fraction(w) / mass
            name = f"z{i}_{j}"
            b = self.declare(name)
            self.noise[name] = (p.denominator - p.numerator, p.numerator)
            out[v] = rest & b
            rest &= ~b
            mass -= w
        out[support[-1][0]] = rest
        return out

    def apply(self, node: Node, maps: list[dict[int, Any]]) -> dict[int, Any]:
        out: dict[int, Any] = {}
        if node.op == "ite":
            cond, a, b = maps
            c1, c0 = cond.get(1, self.false), cond.get(0, self.false)
            for v in set(a) | set(b):
                self.tick()
                out[v] = (c1 & a.get(v, self.false)) | (c0 & b.get(v, self.false))
            return {v: c for v, c in out.items() if c != self.false}
        combos: list[tuple[list[Any], Any]] = [([], None)]  # None: no condition yet (true)
        done = 0
        for m in maps:
            if len(m) == 1:  # a constant: its condition is true
                (v,) = m
                combos = [(vals + [v], c) for vals, c in combos]
                continue
            nxt = []
            for vals, c in combos:
                for v, cv in m.items():
                    if c is None:
                        nxt.append((vals + [v], cv))
                    else:
                        done += 1
                        self.tick()
                        if done % COMBO_CHECK_EVERY == 0:
                            self.check_budget()
                        cc = c & cv
                        if cc != self.false:
                            nxt.append((vals + [v], cc))
            combos = nxt
        for vals, c in combos:
            r = evaluate(node.op, node.attr, vals)
            c = self.true if c is None else c
            out[r] = out[r] | c if r in out else c
        return out

    def output(self, j: int, vmap: dict[int, Any]) -> tuple[list[int], list[str]]:
        values = sorted(vmap)
        names = [f"o{j}_{k}" for k in range(_width(len(values)))]
        for name in names:
            self.declare(name)
        return values, names

    def operand(self, maps: dict[int, dict[int, Any]], a: int) -> dict[int, Any]:
        if a not in maps:  # an input, first used here
            maps[a] = self.input_map(self.program.nodes[a].attr)
        return maps[a]

    def tick(self) -> None:
        """The clock, before each BDD operation (cheap: one operation can take seconds)."""
        deadline.check(self.where)

    def check_budget(self) -> None:
        n = len(self.bdd)
        if n > self.budget:
            raise BudgetExceeded(
                f"BDD node budget exceeded: {n} nodes > {self.budget} while bit-blasting "
                f"{self.program.name}", limit="bdd_nodes", value=self.budget)

    def run(self) -> Compiled:
        prog = self.program
        nodes = prog.nodes
        last = [-1] * len(nodes)
        for i, n in enumerate(nodes):
            for a in n.args:
                last[a] = i
        comps: dict[int, list[int]] = {}
        for j, o in enumerate(prog.outputs):
            comps.setdefault(o, []).append(j)
            last[o] = len(nodes)
        maps: dict[int, dict[int, Any]] = {}
        out_values: list[list[int]] = [[] for _ in prog.outputs]
        out_bits: list[list[str]] = [[] for _ in prog.outputs]
        out_maps: list[dict[int, Any]] = [{} for _ in prog.outputs]
        for i, node in enumerate(nodes):
            if node.op == "const":
                maps[i] = {node.attr: self.true}
            elif node.op == "input":  # declared at first use, to interleave inputs with noise
                if i not in comps:
                    continue
                maps[i] = self.input_map(node.attr)
            elif node.op == "draw":
                maps[i] = self.draw(i, node)
            else:
                self.tick()
                maps[i] = self.apply(node, [self.operand(maps, a) for a in node.args])
            for j in comps.get(i, []):
                out_values[j], out_bits[j] = self.output(j, maps[i])
                out_maps[j] = maps[i]
            for a in set(node.args):
                if last[a] == i:
                    del maps[a]
            if i % BUDGET_CHECK_EVERY == 0 or i & (i - 1) == 0:
                self.check_budget()
        self.check_budget()
        if self.reorder:  # one more sifting pass on the finished maps, then a fixed order
            self.bdd.reorder()
            self.bdd.configure(reordering=False)
        return Compiled(self.bdd, self.library, out_maps, self.input_bits, self.input_lo,
                        out_values, out_bits, self.noise)


def cone_order(program: Program) -> Program:
    """The same program with its nodes in depth-first post-order from each output in turn.

    Variables are declared where the blaster first meets them, so visiting the nodes
    output by output interleaves the noise of each output with it, however the author's
    loops drew it (RAPPOR draws every permanent bit before any instantaneous one: in
    trace order its BDD is exponential in the filter size, in cone order linear).
    """
    order: list[int] = []
    seen: set[int] = set()
    for root in program.outputs:
        stack = [(root, False)]
        while stack:
            i, done = stack.pop()
            if done:
                order.append(i)
            elif i not in seen:
                seen.add(i)
                stack.append((i, True))
                stack.extend((a, False) for a in reversed(program.nodes[i].args) if a not in seen)
    new = {old: k for k, old in enumerate(order)}
    nodes = tuple(replace(program.nodes[old], args=tuple(new[a] for a in program.nodes[old].args))
                  for old in order)
    return replace(program, nodes=nodes, outputs=tuple(new[o] for o in program.outputs))


def compile_program(program: Program, *, node_budget: int = DEFAULT_NODE_BUDGET,
                    reorder: bool = False, library: str | None = None) -> Compiled:
    """Bit-blast ``program`` (discrete noise only) into a BDD relation; see the module doc.

    ``reorder`` turns on CUDD's dynamic reordering (sifting) while building.  It is off
    by default: the first-use order is already interleaved by record, and on the
    catalogue sifting costs more than it saves (above threshold, L = 30: 0.77 s with
    three reorderings to 884 nodes, against 0.03 s and 827 nodes without).
    Raises :class:`BudgetExceeded` when the manager holds more than ``node_budget`` nodes.
    """
    return _Blaster(program, node_budget, reorder, library).run()

