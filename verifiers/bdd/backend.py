"""The BDD backend: exact answers by weighted model counting, in the style of Dice.

The program is bit-blasted once into a relation ``R(x, z, o)`` (:mod:`verifiers.bdd.bitblast`)
with symbolic inputs.  For an input ``x`` the relation is cofactored (``let``) and the
noise summed out with the output bits kept (:mod:`verifiers.bdd.wmc`): the result is a
weighted decision diagram of ``D * P(o | x)`` over *every* output at once
(:mod:`verifiers.bdd.wdd`), so a mechanism with 2^100 outputs (randomized response on 100
clients) costs as much as its diagram, which is linear in n.  Pair questions are
answered on two such diagrams without listing outputs: the largest ratio (and the
decision oracle built on it) and the Renyi sum.  :meth:`BDDBackend.table` gives
``P(o | x)`` for every input and output at once, as exact integers over ``D``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from samplers.errors import BudgetExceeded
from samplers.lang.ir import Program
from verifiers.base import MAX_CACHED_INPUTS, Distribution, Event, ExactBackend, Output, output_components
from verifiers.bdd.bitblast import (
    DEFAULT_NODE_BUDGET,
    Compiled,
    compile_program,
    regular_id,
)
from verifiers.ratio import INF, Ratio
from verifiers.bdd.wdd import WDD, Edge
from verifiers.bdd.wmc import Levels, count

Law = tuple[Edge, int]  # D * P(o | x) as a WDD edge, and D
SMALL_EVENT = 16  # up to this many outputs, an event is counted output by output
MAX_TABLE = 2**26  # entries of a full table (every input bit pattern times every output code)
MAX_WDD_ENTRIES = 1_000_000  # nodes and memo entries of the laws' manager before a sweep starts it afresh


@dataclass(frozen=True)
class Table:
    """``P(o | x) = numerators[i, j] / denominator`` for ``inputs[i]`` and ``outputs[j]``."""

    inputs: list[tuple[int, ...]]
    outputs: list[Output]
    numerators: np.ndarray  # int64 when every value fits, else Python ints
    denominator: int


class BDDBackend(ExactBackend):
    """Exact backend over ``dd`` BDDs (``dd.cudd`` where available, else ``dd.autoref``).

    ``node_budget`` bounds both the BDD manager and each weighted diagram: exceeding it
    raises :class:`~samplers.errors.BudgetExceeded` (a result, in :func:`verifiers.verify.verify`).
    """

    name = "bdd"

    def __init__(self, program: Program, *, node_budget: int = DEFAULT_NODE_BUDGET,
                 reorder: bool = False, library: str | None = None) -> None:
        super().__init__(program)
        self.node_budget = node_budget
        self.reorder = reorder
        self._library = library
        self._compiled: Compiled | None = None
        self._laws: dict[tuple[int, ...], Law] = {}
        self._joint: tuple[WDD, Edge, dict[str, int], dict[int, int]] | None = None

    # -- compilation ------------------------------------------------------------------
    @property
    def compiled(self) -> Compiled:
        """The bit-blasted relation (built on first use; may raise BudgetExceeded)."""
        if self._compiled is None:
            c = compile_program(self.program, node_budget=self.node_budget, reorder=self.reorder,
                                library=self._library)
            self._compiled = c
            self._output_names = [n for names in c.output_bits for n in names]
            self._regular = regular_id(c.library)
            self._levels = self._make_levels(set(self._output_names))
            self._scalar_levels = self._make_levels(set())
            self._scalar_wdd = WDD(0)
            self._rank_names = self._ranked(set(self._output_names))
            self.wdd = WDD(len(self._output_names))
        return self._compiled

    @property
    def library(self) -> str:
        """Which ``dd`` implementation holds the BDDs."""
        return self.compiled.library

    @property
    def size(self) -> int:
        """Nodes of the relation BDD."""
        return self.compiled.size

    def _ranked(self, kept: set[str]) -> list[str]:
        bdd = self._compiled.bdd
        return sorted(kept, key=bdd.level_of_var)

    def _make_levels(self, kept: set[str]) -> Levels:
        c = self._compiled
        level = c.bdd.level_of_var
        weights = {level(v): w for v, w in c.noise.items()}
        return Levels.build(len(c.bdd.vars), [level(v) for v in kept], weights)

    # -- one input --------------------------------------------------------------------
    def law(self, x: Sequence[int]) -> Law:
        """``D * P(. | x)`` over the output bits, and ``D``.

        Once every input is wanted (:meth:`prepare_sweep`), laws are cofactors of the
        joint count with inputs kept; until then each input is counted on its own.
        """
        key = tuple(x)
        if key not in self._laws:
            key = self.check_input(x)
            c = self.compiled
            if self._joint is not None:
                wdd, edge, ranks, rename = self._joint
                bits = {ranks[n]: int(b) for n, b in c.input_assignment(key).items()}
                law = wdd.restrict(edge, bits, into=self.wdd, rename=rename)
            else:
                inputs = c.input_assignment(key)
                u = c.bdd.let(inputs, c.relation) if inputs else c.relation
                law = count(u, self._levels, self.wdd, self._regular, self.node_budget)
            self._laws[key] = (law, self._levels.denominator)
        return self._laws[key]

    def joint_law(self) -> tuple[WDD, Edge, dict[str, int], dict[int, int]]:
        """``D * P(o | x)`` for all inputs and outputs at once: the relation counted with the
        input bits kept too.  Returns the manager, the edge, each input bit's rank and the
        map from output ranks there to output ranks in :attr:`wdd`."""
        if self._joint is None:
            c = self.compiled
            kept = set(self._output_names) | {n for bits in c.input_bits for n in bits}
            ranked = self._ranked(kept)
            wdd = WDD(len(ranked))
            edge = count(c.relation, self._make_levels(kept), wdd, self._regular, self.node_budget)
            ranks = {n: r for r, n in enumerate(ranked)}
            rename = {ranks[n]: k for k, n in enumerate(self._rank_names)}
            self._joint = (wdd, edge, ranks, rename)
        return self._joint

    def trim(self) -> None:
        """Start the laws' manager afresh once it holds too much (the joint count is kept)."""
        if self._compiled is not None and (len(self._laws) > MAX_CACHED_INPUTS or self.wdd.entries() > MAX_WDD_ENTRIES):
            self._laws.clear()
            self.wdd = WDD(len(self._output_names))

    def prepare_sweep(self) -> None:
        """Every input is wanted: count them all at once (:meth:`joint_law`)."""
        self.joint_law()

    def _output(self, bits: Sequence[int]) -> Output:
        vals = self.compiled.decode(dict(zip(self._rank_names, bits)))
        return tuple(vals) if self.program.tuple_output else vals[0]

    def distribution(self, x: Sequence[int]) -> Distribution:
        edge, d = self.law(x)
        return {self._output(bits): Fraction(w, d) for bits, w in self.wdd.items(edge)}

    def event_probability(self, x: Sequence[int], event: Event) -> Fraction:
        """Read off the law of ``x`` when it is known; else, for a small event, count each
        output's cofactor of the relation with nothing kept (plain integer counting)."""
        if callable(event):
            return super().event_probability(x, event)
        # an output of another shape than the program's is impossible: it weighs nothing
        shaped = (output_components(self.program, o) for o in event)
        outs = list(dict.fromkeys(v for v in shaped if v is not None))
        if tuple(x) in self._laws or len(outs) > SMALL_EVENT:
            edge, d = self.law(x)
            codes = [b for b in map(self.compiled.encode, outs) if b is not None]
            return Fraction(sum(self.wdd.evaluate(edge, [b[n] for n in self._rank_names]) for b in codes), d)
        c = self.compiled
        inputs = c.input_assignment(self.check_input(x))
        total = 0
        for vals in outs:
            u = c.bdd.let(inputs, c.event(vals)) if inputs else c.event(vals)
            total += count(u, self._scalar_levels, self._scalar_wdd, self._regular)[0]
        return Fraction(total, self._levels.denominator)

    # -- pairs ------------------------------------------------------------------------
    def pair_epsilon(self, x: Sequence[int], xp: Sequence[int]) -> tuple[Ratio, Output | None]:
        r, bits = self._max_ratio(x, xp, witness=True)
        return r, None if bits is None else self._output(bits)

    def pair_ratio(self, x: Sequence[int], xp: Sequence[int]) -> Ratio:
        return self._max_ratio(x, xp, witness=False)[0]

    def _max_ratio(self, x: Sequence[int], xp: Sequence[int], *, witness: bool):
        (e1, d1), (e2, d2) = self.law(x), self.law(xp)
        r, bits = self.wdd.max_ratio(e1, e2, witness=witness)
        return (r * Fraction(d2, d1) if r != INF and r else r), bits

    def exists_violation(self, x: Sequence[int], xp: Sequence[int], c: Fraction) -> Output | None:
        r, o = self.pair_epsilon(x, xp)
        return o if r > Fraction(c) else None

    def pair_power_sum(self, x: Sequence[int], xp: Sequence[int], alpha: int) -> Ratio:
        (e1, d1), (e2, d2) = self.law(x), self.law(xp)
        s = self.wdd.power_sum(e1, e2, alpha)
        return s if s == INF else s * Fraction(d2 ** (alpha - 1), d1**alpha)

    # -- every input at once ------------------------------------------------------------
    def table(self) -> Table:
        """``P(o | x)`` for every domain input and every output code, from one count.

        The inputs are kept symbolic next to the outputs, so one traversal yields the
        whole joint table; it is expanded with numpy (int64 when it fits).
        """
        c = self.compiled
        wdd, edge, pos, _ = self.joint_law()
        if 2 ** len(pos) > MAX_TABLE:
            raise BudgetExceeded(f"a table over {len(pos)} input and output bits exceeds {MAX_TABLE} entries",
                                 limit="table_entries", value=MAX_TABLE)
        ranked = sorted(pos, key=pos.get)
        flat = wdd.to_array(edge).reshape((2,) * len(ranked)) if ranked else wdd.to_array(edge)
        order = [pos[n] for bits in c.input_bits for n in reversed(bits)]
        out_order = [pos[n] for n in self._output_names]
        grid = np.transpose(flat, order + out_order).reshape(2 ** len(order), 2 ** len(out_order))
        inputs = list(self.program.domain.points())
        rows = [self._input_code(x) for x in inputs]
        outputs, cols = [], []
        for code in range(2 ** len(out_order)):
            bits = [code >> (len(out_order) - 1 - k) & 1 for k in range(len(out_order))]
            vals = c.decode(dict(zip(self._output_names, bits)))
            if vals is not None:
                outputs.append(tuple(vals) if self.program.tuple_output else vals[0])
                cols.append(code)
        return Table(inputs, outputs, grid[np.ix_(rows, cols)], self._levels.denominator)

    def _input_code(self, x: tuple[int, ...]) -> int:
        code = 0
        for bits, lo, v in zip(self.compiled.input_bits, self.compiled.input_lo, x):
            code = (code << len(bits)) | (v - lo)
        return code
