"""The continuous backend: rigorous enclosures for programs with Laplace, exponential and Gaussian noise.

The same questions as the exact backends (:mod:`verifiers.base`), answered with
enclosures instead of exact rationals, against the real-number semantics of the noise
(the laws with their exact scales, not a floating-point sampler):

* :meth:`ContinuousBackend.event_probability` -- ``lo <= P(M(x) in E) <= hi``;
* :meth:`~ContinuousBackend.witness_ratio` -- the certified ratio ``lo(P(E|x)) / hi(P(E|x'))``
  and an upper end;
* :meth:`~ContinuousBackend.exists_violation` -- "yes" (with the output) only when
  ``lo(P(o|x)) > c hi(P(o|x'))``, "no" only when ``hi(P(o|x)) <= c lo(P(o|x'))`` for every
  output, otherwise "undecided" once the refinement budget is spent;
* :meth:`~ContinuousBackend.pair_epsilon` and :meth:`~ContinuousBackend.global_epsilon` -- the
  level over finite outputs, bracketed to a precision.

A probability is a sum over the program's paths (:mod:`verifiers.continuous.paths`) of each
path's weight times the probability of its region (:mod:`verifiers.continuous.region`).  Events
are either collections of outputs or *symbolic events*: callables ``event(run)`` that
read outputs with ``run.output(k)``, compare them with ``run.less`` / ``run.winner``
(which branch the path) and return the path's membership weight (1, 0 or a rational
such as an attack's tie probability).  A symbolic event marked ``reads_every_output``
(it reads every output, in order, before anything else) is weighed on each input's
finished runs (:func:`verifiers.continuous.paths.complete_runs`): the same paths and
regions, with the program executed once per input instead of once per event.  A symbolic
event with ``parts`` (a product: each part's key and weigher, weighed in order, the weights
multiplied) is explored part by part from the runs kept after its first parts
(:mod:`verifiers.continuous.product_paths`): the same paths again, without re-running what the
events before it shared.
``hybrid.searcher.regions`` turns the testers' events into symbolic events.

Enclosures are refined on demand by raising the level (precision bits, quadrature and
cell counts; :mod:`verifiers.continuous.enclosure`); ``max_level`` is the budget, and a result
that hits it says so (``level``, ``decided``).  The time limit in force
(:mod:`samplers.deadline`) is checked before every path's region is enclosed and
during symbolic execution; it raises ``TimeLimitReached``, never returns a part.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Sequence

from samplers import deadline
from samplers.errors import BudgetExceeded, UnsupportedByBackend
from samplers.lang.domain import Domain
from samplers.lang.ir import Program
from verifiers.base import Progress, checked_pair, neighbour_pairs, output_order, sweep_progress
from verifiers.continuous.enclosure import ZERO, Enclosure, RatioEnclosure, working_precision
from verifiers.epsilon import eps_lower, eps_upper
from verifiers.continuous.linear import Form
from verifiers.continuous.paths import MAX_PATHS, Path, Run, Specialised, complete_runs, explore, specialise
from verifiers.continuous.product_paths import ProductPaths
from verifiers.ratio import INF
from verifiers.continuous.region import Stars, probability

MAX_LEVEL = 4
MAX_CACHED_INPUTS = 4096  # inputs whose paths a sweep keeps (then it starts afresh) ...
MAX_CACHED_ENCLOSURES = 1 << 18  # ... and region enclosures
MAX_CACHED_RUNS = 256  # inputs whose finished runs are kept for events that read every output
COMPLETE_RUNS = 20_000  # runs of one input's complete exploration, beyond which events explore afresh
REGION_WORK = 100  # work units of enclosing one region, besides its constraints and integration
CONSTRAINT_WORK = 20  # work units per constraint of a region enclosed
RELATIVE_WIDTH = Fraction(1, 2**40)  # a witness ratio is refined until this relative width
SymbolicEvent = Callable[[Run], Any]
Point = tuple[int, ...]


class NumericOutputs(UnsupportedByBackend):
    """The question needs finite outputs, but the program releases continuous values."""


@dataclass(frozen=True)
class Decision:
    """The decision oracle's answer: ``"yes"`` (with ``output``), ``"no"`` or ``"undecided"``."""

    answer: str
    output: Any = None
    level: int = 0

    @property
    def yes(self) -> bool:
        return self.answer == "yes"


@dataclass(frozen=True)
class WitnessRatio:
    """``P(E|x)`` and ``P(E|x')`` enclosed, and their ratio's enclosure."""

    p: Enclosure
    q: Enclosure
    level: int
    decided: bool  # the relative width target was met within the budget

    @property
    def ratio(self) -> RatioEnclosure:
        return RatioEnclosure.of(self.p, self.q)


@dataclass(frozen=True)
class PairLevel:
    """The level of a pair over finite outputs: ``max_o P(o|x) / P(o|x')`` enclosed."""

    ratio: RatioEnclosure  # lo: the best output's certified ratio; hi: the largest upper end
    output: Any  # the output whose certified ratio is ``ratio.lo``
    level: int
    decided: bool  # the bracket is narrower than the precision asked for

    @property
    def bracket(self) -> tuple[float, float]:
        return eps_bracket(self.ratio)


@dataclass(frozen=True)
class GlobalLevel:
    """The level over every neighbour pair of a (finite) domain, with a witness pair and output."""

    ratio: RatioEnclosure
    x: Point | None
    x_prime: Point | None
    output: Any
    pairs: int
    level: int
    decided: bool

    @property
    def complete(self) -> bool:
        """Always: a continuous sweep stopped by a time limit raises instead of returning a part."""
        return True

    @property
    def eps_lower(self) -> float:
        return eps_bracket(self.ratio)[0]

    @property
    def eps_upper(self) -> float:
        return eps_bracket(self.ratio)[1]


def _narrowed(event: SymbolicEvent, k: int, wanted: tuple[int, ...]) -> SymbolicEvent:
    """``event`` explored on the paths where output ``k`` (an argmax) is in ``wanted`` only."""
    def body(run: Run) -> Any:
        run.expect(k, wanted)
        return event(run) if run.output(k) in wanted else 0

    return body


def _ratio_width_ok(r: RatioEnclosure, rel: Fraction) -> bool:
    if r.lo == INF or r.hi == 0:
        return True
    if r.hi == INF or r.lo == 0:
        return False
    return r.hi - r.lo <= rel * r.lo


STALLED = Fraction(3, 4)  # a level that leaves both widths above this share of the last level's has stalled


def _stalled(before: tuple[Enclosure, Enclosure], after: tuple[Enclosure, Enclosure]) -> bool:
    """Whether raising the level left both probabilities' widths above :data:`STALLED` of what they
    were: the enclosures are then limited by what the precision does not refine (the cell depth of a
    region that is no star, :mod:`verifiers.continuous.region`), and each further level costs about
    four times the last for almost nothing.  Decided on the widths, a count, never on time."""
    return all(new.width > STALLED * old.width for old, new in zip(before, after))


def eps_bracket(r: RatioEnclosure) -> tuple[float, float]:
    """Floats around the level ``max(0, ln ratio)`` for a ratio in ``[r.lo, r.hi]``, rounded outwards."""
    return eps_lower(r.lo) if r.lo else 0.0, eps_upper(r.hi) if r.hi else 0.0


def _eps_width(r: RatioEnclosure) -> float:
    lower, upper = eps_bracket(r)
    return 0.0 if lower == upper else upper - lower


class ContinuousBackend:
    """Rigorous enclosures for one program (see the module docstring)."""

    name = "continuous"

    def __init__(self, program: Program, *, max_level: int = MAX_LEVEL, max_paths: int = MAX_PATHS) -> None:
        self.program = program  # callers pass running-max loops as argmax (verifiers.backends)
        self.max_level = max_level
        self.max_paths = max_paths
        self._specs: dict[Point, Specialised] = {}
        self._outputs: dict[Point, dict[Any, list[Path]]] = {}
        self._runs: dict[Point, list[Run] | None] = {}  # finished runs per input (None: too many)
        # One input with too many runs: the others are not tried (the count barely depends on the input,
        # the noise being unbounded, and finding out costs COMPLETE_RUNS runs: seconds per input).  Either
        # way an event gets the same paths (complete_runs), so this decides how long, never what.
        self._too_many_runs = False
        self._heads: dict[tuple, list[Run]] = {}  # (input, set event) -> the finished runs inside it
        self._labels: dict[tuple, dict[Any, list[int]]] = {}  # (input, label key) -> run indices by label
        self._products = ProductPaths(max_paths)  # runs past the first parts of product events, per input
        self._enclosures: dict[tuple, Enclosure] = {}
        self._stars = Stars()  # stars integrated, by shape, and the work it took (verifiers.continuous.region)
        self._constraints = 0  # work of reading the regions enclosed: per region and per constraint
        self.regions = 0  # regions enclosed so far (cached ones not counted again): a measure of work

    @property
    def work(self) -> int:
        """The enclosure work so far, a count that grows as the time does (about 3 us a unit): the
        regions enclosed and their constraints (symbolic execution and the solver's reading grow
        with them) plus the stars' integration work (:class:`verifiers.continuous.region.Stars`)."""
        return self._constraints + self._stars.work

    def counts(self) -> tuple[int, int, int]:
        """The regions enclosed, their constraints' work and the stars' work: what :meth:`charge` adds."""
        return self.regions, self._constraints, self._stars.work

    def charge(self, counts: Sequence[int]) -> None:
        """Add the :meth:`counts` of work done on a copy of this backend (a forked task) to its own."""
        regions, constraints, stars = counts
        self.regions += regions
        self._constraints += constraints
        self._stars.work += stars

    # -- inputs and paths --------------------------------------------------------------
    def check_input(self, x: Sequence[int]) -> Point:
        return self.program.domain.check(x)

    def check_pair(self, x: Sequence[int], xp: Sequence[int]) -> tuple[Point, Point]:
        return checked_pair(self.program, x, xp)

    def specialised(self, x: Sequence[int]) -> Specialised:
        key = self.check_input(x)
        if key not in self._specs:
            self._specs[key] = specialise(self.program, key)
        return self._specs[key]

    def paths(self, x: Sequence[int], body: Callable[[Run], Any]) -> list[Path]:
        """Every path of ``body`` on input ``x`` (paths where it returns None or 0 dropped)."""
        return [p for p in explore(self.specialised(x), body, max_paths=self.max_paths) if p.result]

    def output_paths(self, x: Sequence[int]) -> dict[Any, list[Path]]:
        """The paths of each output (finite outputs only; NumericOutputs otherwise)."""
        key = self.check_input(x)
        if key not in self._outputs:
            by_output: dict[Any, list[Path]] = {}
            for p in self.paths(key, self._finite_output):
                by_output.setdefault(p.result[0], []).append(dataclasses.replace(p, result=1))
            self._outputs[key] = by_output
        return self._outputs[key]

    def _finite_output(self, run: Run) -> tuple[Any]:
        """A path's output, or NumericOutputs on the first path that releases a continuous value (not
        after exploring every path: tens of thousands on a pair of sparse vectors over 20 queries)."""
        o = run.outputs()
        if any(isinstance(v, Form) for v in (o if isinstance(o, tuple) else (o,))):
            raise NumericOutputs(f"{self.program.name} releases continuous values, so questions about "
                                 "single outputs are not supported; ask about events instead")
        return (o,)

    def finite_outputs(self, x: Sequence[int]) -> bool:
        """Whether every output of ``x`` is one of finitely many values (no continuous value released)."""
        try:
            self.output_paths(x)
        except NumericOutputs:
            return False
        return True

    # -- enclosures --------------------------------------------------------------------
    def enclose(self, spec: Specialised, paths: Iterable[Path], level: int) -> Enclosure:
        """``sum weight * result * P(region)`` over the paths, at ``level`` (a result may be negative:
        see :meth:`_argmax_paths`)."""
        total = ZERO
        with working_precision(level):
            for p in paths:
                key = (id(spec), p.constraints, level)
                region = self._enclosures.get(key)
                if region is None:
                    deadline.check("while enclosing probabilities")
                    region = Enclosure.exact(1) if not p.constraints else \
                        Enclosure.from_arb(probability(p.constraints, spec.laws, level, self._stars))
                    self._enclosures[key] = region
                    self.regions += 1
                    self._constraints += REGION_WORK + CONSTRAINT_WORK * len(p.constraints)
                total = total + region.scaled(p.weight * Fraction(p.result))
        return total if total.lo >= 0 else Enclosure(Fraction(0), total.hi)  # a complement's paths subtract

    def distribution(self, x: Sequence[int], level: int = 0) -> dict[Any, Enclosure]:
        """Each output's probability enclosed (outputs that are certainly impossible left out)."""
        spec = self.specialised(x)
        out = {o: self.enclose(spec, ps, level) for o, ps in self.output_paths(x).items()}
        return {o: e for o, e in out.items() if e.hi > 0}

    def _complete_runs(self, x: Sequence[int]) -> list[Run] | None:
        """The finished runs of every path of ``x`` with all outputs evaluated (None when there are
        more than :data:`COMPLETE_RUNS`)."""
        key = self.check_input(x)
        if key not in self._runs:
            if len(self._runs) >= MAX_CACHED_RUNS:
                self._runs.clear()
                self._heads.clear()
                self._labels.clear()
            try:
                self._runs[key] = None if self._too_many_runs else \
                    complete_runs(self.specialised(key), max_paths=COMPLETE_RUNS)
            except BudgetExceeded:
                self._runs[key] = None
                self._too_many_runs = True
        return self._runs[key]

    def _runs_in(self, x: Sequence[int], key: Any, head: SymbolicEvent, index: tuple | None) -> list[Run] | None:
        """The finished runs of ``x`` on which the set event ``head`` (``key``: the event it weighs)
        holds; a set event reads outputs only, so it decides each run without branching it.  With an
        ``index`` ``(key, label, wanted)`` the runs are grouped by ``label`` once per input and key,
        and the head holds on the runs whose label is wanted (in the runs' order)."""
        runs = self._complete_runs(x)
        if runs is None:
            return None
        at = (self.check_input(x), key)
        if at not in self._heads:
            if len(self._heads) >= MAX_CACHED_RUNS:
                self._heads.clear()
            if index is None:
                self._heads[at] = [r for r in runs if head(r.resumed())]
            else:
                groups = self._groups(at[0], runs, index[0], index[1])
                self._heads[at] = [runs[i] for i in sorted(i for w in index[2] for i in groups.get(w, ()))]
        return self._heads[at]

    def _groups(self, x: Point, runs: list[Run], key: Any, label: Callable[[Run], Any]) -> dict[Any, list[int]]:
        """The indices of ``x``'s finished runs by ``label`` (computed once per input and ``key``)."""
        at = (x, key)
        if at not in self._labels:
            groups: dict[Any, list[int]] = {}
            for i, r in enumerate(runs):
                groups.setdefault(label(r.resumed()), []).append(i)
            self._labels[at] = groups
        return self._labels[at]

    def _event_paths(self, x: Sequence[int], event: Iterable[Any] | SymbolicEvent) -> list[Path]:
        narrowed = self._argmax_paths(x, event) if callable(event) else None
        if narrowed is not None:
            return narrowed
        if callable(event):
            paths = self._paths_on_runs(x, event) if getattr(event, "reads_every_output", False) else None
            if paths is None and getattr(event, "parts", None):
                key = self.check_input(x)
                paths = self._products.paths(self.specialised(key), key, event.parts)
            return self.paths(x, event) if paths is None else paths
        members = {tuple(o) if isinstance(o, list) else o for o in event}
        return [p for o, ps in self.output_paths(x).items() if o in members for p in ps]

    def _argmax_paths(self, x: Sequence[int], event: SymbolicEvent) -> list[Path] | None:
        """The paths of an event that reads output ``k`` only, when that output is an argmax
        (``event.expects``: ``k`` and ``holds(i)``, whether the event holds when the index is ``i``):
        only the winners it holds on are explored (:meth:`Run.expect`), or, when it holds on more
        than half of the indices, ``1 - P(the others win)``: a path of weight 1 and no constraint, and
        the others' paths counted ``-1`` times (the winners' regions partition the noise space up to
        boundaries of probability zero).  None for any other event or output."""
        expects = getattr(event, "expects", None)
        if expects is None:
            return None
        k, holds = expects
        spec = self.specialised(x)
        if not 0 <= k < len(spec.outputs) or spec.nodes[spec.outputs[k]].op != "argmax":
            return None
        arity = len(spec.nodes[spec.outputs[k]].args)
        wanted = tuple(i for i in range(arity) if holds(i))
        if 2 * len(wanted) <= arity:
            return self.paths(x, _narrowed(event, k, wanted))
        rest = tuple(sorted(set(range(arity)) - set(wanted)))
        others = self.paths(x, _narrowed(lambda run: 1, k, rest))
        return [Path(Fraction(1), (), 1)] + [dataclasses.replace(p, result=-p.result) for p in others]

    def _paths_on_runs(self, x: Sequence[int], event: SymbolicEvent) -> list[Path] | None:
        """The paths of an event that reads every output first, from the finished runs of ``x``: the
        same paths as ``self.paths(x, event)`` without re-running the program (None: too many runs).

        An event headed by a set event (``event.head``: its key, its symbolic event, the rest of the
        event or None, and an index of the runs or None: see :meth:`_runs_in`) is weighed on the
        runs the head keeps: the head reads outputs only (it leaves a run as it was), so the rest
        alone is weighed from there."""
        head = getattr(event, "head", None)
        runs = self._complete_runs(x) if head is None else self._runs_in(x, head[0], head[1], head[3])
        if runs is None:
            return None
        if head is not None and head[2] is None:  # the head is the whole event: it holds, with weight 1
            return [Path(r.weight, tuple(r.constraints), 1) for r in runs]
        body = event if head is None else head[2]
        spec = self.specialised(x)
        return [p for r in runs for p in explore(spec, body, max_paths=self.max_paths, start=r) if p.result]
        members = {tuple(o) if isinstance(o, list) else o for o in event}
        return [p for o, ps in self.output_paths(x).items() if o in members for p in ps]

    def event_probability(self, x: Sequence[int], event: Iterable[Any] | SymbolicEvent, level: int = 0) -> Enclosure:
        """``P(M(x) in event)`` enclosed; ``event`` is a collection of outputs or a symbolic event."""
        return self.enclose(self.specialised(x), self._event_paths(x, event), level)

    # -- pairs ---------------------------------------------------------------------------
    def witness_ratio(self, x: Sequence[int], xp: Sequence[int], event: Iterable[Any] | SymbolicEvent, *,
                      rel_width: Fraction = RELATIVE_WIDTH) -> WitnessRatio:
        """``P(E|x) / P(E|x')`` enclosed, refined until ``rel_width``, the budget, or a level that stalls
        (:func:`_stalled`)."""
        x, xp = self.check_pair(x, xp)
        px, pxp = self._event_paths(x, event), self._event_paths(xp, event)
        sx, sxp = self.specialised(x), self.specialised(xp)
        before: tuple[Enclosure, Enclosure] | None = None
        for level in range(self.max_level + 1):
            p, q = self.enclose(sx, px, level), self.enclose(sxp, pxp, level)
            done = _ratio_width_ok(RatioEnclosure.of(p, q), rel_width)
            if done or (before is not None and _stalled(before, (p, q))):
                break
            before = (p, q)
        return WitnessRatio(p, q, level, done)

    def _output_ratios(self, x: Point, xp: Point, outputs: Iterable[Any], level: int) -> dict[Any, RatioEnclosure]:
        px, pxp = self.output_paths(x), self.output_paths(xp)
        sx, sxp = self.specialised(x), self.specialised(xp)
        return {o: RatioEnclosure.of(self.enclose(sx, px[o], level), self.enclose(sxp, pxp.get(o, ()), level))
                for o in outputs}

    def exists_violation(self, x: Sequence[int], xp: Sequence[int], c: Fraction) -> Decision:
        """Is there an output with ``P(o|x) > c P(o|x')``?  Three-valued (see the module docstring)."""
        x, xp = self.check_pair(x, xp)
        c = Fraction(c)
        open_ = sorted(self.output_paths(x), key=output_order)
        for level in range(self.max_level + 1):
            ratios = self._output_ratios(x, xp, open_, level)
            for o in open_:
                if ratios[o].lo > c:
                    return Decision("yes", o, level)
            open_ = [o for o in open_ if not ratios[o].hi <= c]
            if not open_:
                return Decision("no", None, level)
        return Decision("undecided", open_[0], self.max_level)

    def pair_epsilon(self, x: Sequence[int], xp: Sequence[int], precision: float = 1e-3) -> PairLevel:
        """The pair's level over finite outputs, bracketed to ``precision`` (or the budget)."""
        x, xp = self.check_pair(x, xp)
        return self._pair_level(x, xp, precision)

    def _pair_level(self, x: Point, xp: Point, precision: float) -> PairLevel:
        open_ = sorted(self.output_paths(x), key=output_order)
        ratios: dict[Any, RatioEnclosure] = {}
        for level in range(self.max_level + 1):
            ratios.update(self._output_ratios(x, xp, open_, level))
            best = max(sorted(ratios, key=output_order), key=lambda o: ratios[o].lo, default=None)
            lo = ratios[best].lo if best is not None else Fraction(0)
            hi = max((r.hi for r in ratios.values()), default=Fraction(0))
            if _eps_width(RatioEnclosure(lo, hi)) <= precision:
                return PairLevel(RatioEnclosure(lo, hi), best, level, True)
            open_ = [o for o, r in ratios.items() if r.hi > lo and not (r.lo == INF)]
        return PairLevel(RatioEnclosure(lo, hi), best, self.max_level, False)

    # -- every neighbour pair -------------------------------------------------------------
    def sweep_pairs(self, domain: Domain | None = None) -> Iterator[tuple[Point, Point]]:
        """Every ordered neighbour pair of ``domain`` (default: the declared one)."""
        program = dataclasses.replace(self.program, domain=self.program.domain if domain is None else domain)
        return neighbour_pairs(program)

    def global_epsilon(self, precision: float = 1e-3, domain: Domain | None = None,
                       progress: Progress | None = None) -> GlobalLevel:
        """The level over every neighbour pair of ``domain`` (default: the declared one), finite outputs.

        The pairs are swept lazily, keeping only the best pair, with the time limit checked
        before each and the per-input caches trimmed after each (:meth:`trim`): memory stays flat.
        """
        best: tuple[Point, Point, PairLevel] | None = None
        hi, pairs, level, decided = Fraction(0), 0, 0, True
        for x, xp in self.sweep_pairs(domain):
            deadline.check(f"during the global sweep, after {pairs} neighbour pairs")
            v = self._pair_level(x, xp, precision)
            self.trim()
            pairs, level, decided = pairs + 1, max(level, v.level), decided and v.decided
            sweep_progress(progress, pairs)
            hi = max(hi, v.ratio.hi)
            if best is None or v.ratio.lo > best[2].ratio.lo:
                best = (x, xp, v)
        if best is None:
            return GlobalLevel(RatioEnclosure(Fraction(0), Fraction(0)), None, None, None, 0, 0, True)
        x, xp, v = best
        return GlobalLevel(RatioEnclosure(v.ratio.lo, hi), x, xp, v.output, pairs, level, decided)

    def trim(self) -> None:
        """Forget the per-input paths and enclosures once they pass a size (all together: the
        enclosures are keyed by the identity of their input's specialisation)."""
        if len(self._specs) > MAX_CACHED_INPUTS or len(self._enclosures) > MAX_CACHED_ENCLOSURES:
            self._specs.clear()
            self._outputs.clear()
            self._runs.clear()
            self._heads.clear()
            self._labels.clear()
            self._products.clear()
            self._enclosures.clear()


__all__ = ["ContinuousBackend", "Decision", "GlobalLevel", "NumericOutputs", "PairLevel", "SymbolicEvent", "WitnessRatio",
           "eps_bracket"]
