"""The interface every exact backend implements (enumerate, bdd, smt).

A backend is built for one traced program and answers exact questions about its
output distributions.  Only :meth:`ExactBackend.distribution` is abstract: the other
queries are defined from it here, and backends override them where they can answer
faster (a BDD computes one event's probability without the whole distribution).

Per pair of inputs: event probabilities, witness ratios, the largest single-output
ratio, the decision "is there an output with ``P(o|x) > c P(o|x')``", the hockey-stick
divergence (delta) and the Renyi sum.  Over every neighbour pair of the declared domain
(every pair: an upper bound never rests on an unchecked assumption such as a symmetry of the
inputs): the exact global epsilon with a witness, the global decision, delta(eps) and the
Renyi divergence.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterable, Iterator, Sequence

from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import (
    DomainError,
    ParameterError,
    UnsupportedByBackend,
)
from samplers.lang.ir import CONTINUOUS_NOISE, Program
from verifiers.epsilon import eps_lower, eps_upper, exp_bracket, log_bracket
from verifiers.ratio import INF, Ratio, ratio

Output = Any  # an int, or a tuple of ints (BOTTOM included)
Event = Iterable[Output] | Callable[[Output], bool]
Distribution = dict[Output, Fraction]
Point = tuple[int, ...]
MAX_CACHED_INPUTS = 1 << 14  # inputs whose laws a backend keeps during a sweep (then it starts afresh)
Progress = Callable[[str], None]
PROGRESS_EVERY = 512  # pairs between two progress messages of a sweep


def sweep_progress(progress: Progress | None, pairs: int) -> None:
    """Tell ``progress`` how far a sweep is, every :data:`PROGRESS_EVERY` pairs."""
    if progress is not None and pairs % PROGRESS_EVERY == 0:
        progress(f"global sweep: {pairs:,} neighbour pairs")


@dataclass(frozen=True)
class GlobalEpsilon:
    """The exact level ``e^eps = ratio`` over all neighbour pairs, with a witness attaining it."""

    ratio: Ratio
    x: Point | None
    x_prime: Point | None
    output: Output | None
    pairs: int  # ordered neighbour pairs examined
    stopped: str | None = None  # why the sweep stopped before every pair (a time limit), else None

    @property
    def complete(self) -> bool:
        """Whether every neighbour pair was examined (only then is ``eps_upper`` a bound)."""
        return self.stopped is None

    @property
    def eps_lower(self) -> float:
        return eps_lower(self.ratio)

    @property
    def eps_upper(self) -> float:
        """The certified upper end; ``inf`` when the sweep stopped early (nothing is proved)."""
        return eps_upper(self.ratio) if self.complete else INF


@dataclass(frozen=True)
class DeltaBound:
    """``lo <= delta(eps) <= hi``: max over neighbour pairs of sum_o max(0, P(o|x) - e^eps P(o|x'))."""

    eps: float
    lo: Fraction
    hi: Fraction
    x: Point | None
    x_prime: Point | None
    pairs: int


@dataclass(frozen=True)
class RenyiBound:
    """The Renyi divergence of order ``alpha``, maximised over neighbour pairs.

    ``power_sum`` is the exact ``sum_o P(o|x)^alpha P(o|x')^(1-alpha)`` of the worst pair;
    the divergence ``ln(power_sum) / (alpha - 1)`` lies in ``[lo, hi]`` (floats, sound).
    """

    alpha: int
    power_sum: Ratio
    lo: float
    hi: float
    x: Point | None
    x_prime: Point | None
    pairs: int


def renyi_bracket(power_sum: Ratio, alpha: int) -> tuple[float, float]:
    """Floats around ``ln(power_sum) / (alpha - 1)``, rounded outwards."""
    lo, hi = log_bracket(power_sum)
    if lo == INF:
        return INF, INF
    return (math.nextafter(lo / (alpha - 1), -INF), math.nextafter(hi / (alpha - 1), INF))


def delta_at(p: Distribution, q: Distribution, c: Fraction) -> Fraction:
    """``sum_o max(0, p(o) - c q(o))`` exactly."""
    return sum((max(Fraction(0), v - c * q.get(o, Fraction(0))) for o, v in p.items()), Fraction(0))


def event_predicate(event: Event) -> Callable[[Output], bool]:
    """A membership test for an event given as a collection of outputs or a predicate."""
    if callable(event):
        return event
    members = {tuple(o) if isinstance(o, list) else o for o in event}
    return members.__contains__


def output_components(program: Program, o: Output) -> tuple | None:
    """The component values of ``o`` when it has ``program``'s output shape, else None."""
    if program.tuple_output:
        return tuple(o) if isinstance(o, (tuple, list)) and len(o) == program.arity else None
    return None if isinstance(o, (tuple, list)) else (o,)


def refuse_continuous(program: Program, backend: str) -> None:
    """Raise UnsupportedByBackend when ``program`` draws continuous noise."""
    cont = sorted({n.op for n in program.nodes if n.op in CONTINUOUS_NOISE})
    if cont:
        raise UnsupportedByBackend(
            f"{program.name} draws continuous noise ({', '.join(cont)}), "
            f"which is not supported by the {backend} backend; use the sampling testers"
        )


def checked_pair(program: Program, x: Sequence[int], xp: Sequence[int]) -> tuple[Point, Point]:
    """Both inputs in the program's domain and neighbours under its relation, or a DomainError."""
    a, b = program.domain.check(x), program.domain.check(xp)
    if not program.neighbours.contains(a, b):
        raise DomainError(f"{list(a)} and {list(b)} are not {program.neighbours.name} neighbours")
    return a, b


def neighbour_pairs(program: Program) -> Iterator[tuple[Point, Point]]:
    """Every ordered neighbour pair of the domain."""
    dom, nb = program.domain, program.neighbours
    for x in dom.points():
        for xp in nb.of(x, dom):
            yield x, xp


class ExactBackend(ABC):
    """Exact answers about one program's output distributions."""

    name = "exact"

    def __init__(self, program: Program) -> None:
        refuse_continuous(program, self.name)
        self.program = program

    def check_input(self, x: Sequence[int]) -> tuple[int, ...]:
        return self.program.domain.check(x)

    def check_pair(self, x: Sequence[int], xp: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Both inputs in the domain and neighbours under the program's relation."""
        return checked_pair(self.program, x, xp)

    @abstractmethod
    def distribution(self, x: Sequence[int]) -> Distribution:
        """``P(o | x)`` for every output ``o`` of positive probability."""

    def event_probability(self, x: Sequence[int], event: Event) -> Fraction:
        """``P(M(x) in event)``."""
        member = event_predicate(event)
        return sum((p for o, p in self.distribution(x).items() if member(o)), Fraction(0))

    def witness_ratio(self, x: Sequence[int], xp: Sequence[int], event: Event) -> Ratio:
        """``P(M(x) in S) / P(M(x') in S)``, exact (``inf`` when only x can produce S)."""
        return ratio(self.event_probability(x, event), self.event_probability(xp, event))

    def pair_epsilon(self, x: Sequence[int], xp: Sequence[int]) -> tuple[Ratio, Output | None]:
        """The largest single-output ratio ``P(o|x)/P(o|x')`` and an output attaining it."""
        p, q = self.distribution(x), self.distribution(xp)
        best: Ratio = Fraction(0)
        arg = None
        for o in sorted(p, key=output_order):
            r = ratio(p[o], q.get(o, Fraction(0)))
            if r > best:
                best, arg = r, o
        return best, arg

    def pair_ratio(self, x: Sequence[int], xp: Sequence[int]) -> Ratio:
        """The largest single-output ratio alone (backends may skip finding the output)."""
        return self.pair_epsilon(x, xp)[0]

    def exists_violation(self, x: Sequence[int], xp: Sequence[int], c: Fraction) -> Output | None:
        """An output ``o`` with ``P(o|x) > c P(o|x')``, or None when there is none."""
        c = Fraction(c)
        p, q = self.distribution(x), self.distribution(xp)
        for o in sorted(p, key=output_order):
            if p[o] > c * q.get(o, Fraction(0)):
                return o
        return None


    # -- pairs: divergences ----------------------------------------------------------
    def pair_delta(self, x: Sequence[int], xp: Sequence[int], eps: float) -> tuple[Fraction, Fraction]:
        """``(lo, hi)`` around ``sum_o max(0, P(o|x) - e^eps P(o|x'))`` (exact when eps = 0)."""
        if eps == INF:
            return Fraction(0), Fraction(0)
        p, q = self.distribution(x), self.distribution(xp)
        c_lo, c_hi = (Fraction(1), Fraction(1)) if eps == 0 else exp_bracket(eps)
        return delta_at(p, q, c_hi), delta_at(p, q, c_lo)

    def pair_power_sum(self, x: Sequence[int], xp: Sequence[int], alpha: int) -> Ratio:
        """``sum_o P(o|x)^alpha P(o|x')^(1-alpha)`` exactly (``inf`` if x' misses an output of x)."""
        p, q = self.distribution(x), self.distribution(xp)
        total = Fraction(0)
        for o, v in p.items():
            w = q.get(o, Fraction(0))
            if w == 0:
                return INF
            total += v**alpha / w ** (alpha - 1)
        return total

    # -- every neighbour pair ---------------------------------------------------------
    def prepare_sweep(self) -> None:
        """Called before questions about every input of the domain (backends may batch)."""

    def trim(self) -> None:
        """Called after each pair of a sweep: a backend that remembers laws per input forgets them
        once they pass a size (:data:`MAX_CACHED_INPUTS`), so a sweep's memory stays flat."""

    def neighbour_pairs(self) -> Iterator[tuple[Point, Point]]:
        """:func:`neighbour_pairs` of the program, after preparing the backend for a sweep."""
        self.prepare_sweep()
        return neighbour_pairs(self.program)

    def global_epsilon(self, progress: Progress | None = None) -> GlobalEpsilon:
        """The exact maximum of ``P(o|x)/P(o|x')`` over neighbour pairs and outputs.

        When the time limit in force passes (:mod:`samplers.deadline`), the sweep stops
        and the result is the best pair so far (a certified lower bound), ``stopped``
        saying why; its ``eps_upper`` is then ``inf``.
        """
        best: Ratio = Fraction(0)
        arg: tuple[Any, Any] = (None, None)
        pairs = 0
        stopped = None
        try:
            for x, xp in self.neighbour_pairs():
                deadline.check("during the global sweep")
                r = self.pair_ratio(x, xp)
                self.trim()
                pairs += 1
                sweep_progress(progress, pairs)
                if r > best:
                    best, arg = r, (x, xp)
                    if r == INF:
                        break
        except TimeLimitReached as e:
            stopped = f"{e} after {pairs} neighbour pairs"
        output = None if arg[0] is None else self._witness_output(*arg)
        return GlobalEpsilon(best, *arg, output, pairs=pairs, stopped=stopped)

    def _witness_output(self, x: Point, xp: Point) -> Output | None:
        """An output attaining the pair's level (None if the time limit stops even that)."""
        try:
            return self.pair_epsilon(x, xp)[1]
        except TimeLimitReached:
            return None

    def global_violation(self, c: Fraction) -> tuple[Point, Point, Output] | None:
        """A neighbour pair and output with ``P(o|x) > c P(o|x')``, or None (eps = ln c holds)."""
        for x, xp in self.neighbour_pairs():
            deadline.check("during the global sweep")
            o = self.exists_violation(x, xp, c)
            self.trim()
            if o is not None:
                return x, xp, o
        return None

    def delta(self, eps: float) -> DeltaBound:
        """delta(eps) of approximate DP, bracketed soundly, with the worst pair."""
        lo = hi = Fraction(0)
        arg: tuple[Any, Any] = (None, None)
        pairs = 0
        for x, xp in self.neighbour_pairs():
            deadline.check("during the global sweep")
            pairs += 1
            d_lo, d_hi = self.pair_delta(x, xp, eps)
            self.trim()
            lo = max(lo, d_lo)
            if d_hi > hi:
                hi, arg = d_hi, (x, xp)
        return DeltaBound(eps, lo, hi, *arg, pairs=pairs)

    def renyi(self, alpha: int) -> RenyiBound:
        """The Renyi divergence of integer order ``alpha >= 2``, maximised over neighbour pairs."""
        if isinstance(alpha, bool) or not isinstance(alpha, int) or alpha < 2:
            raise ParameterError(f"Renyi order alpha must be an integer >= 2, got {alpha!r}")
        best: Ratio = Fraction(0)
        arg: tuple[Any, Any] = (None, None)
        pairs = 0
        for x, xp in self.neighbour_pairs():
            deadline.check("during the global sweep")
            pairs += 1
            s = self.pair_power_sum(x, xp, alpha)
            self.trim()
            if s > best or arg[0] is None:
                best, arg = s, (x, xp)
                if s == INF:
                    break
        return RenyiBound(alpha, best, *renyi_bracket(best, alpha), *arg, pairs=pairs)


def output_order(o: Output) -> Any:
    """A total order on outputs, for deterministic witnesses."""
    return (0, o) if not isinstance(o, tuple) else (1, o)


__all__ = [
    "DeltaBound", "Distribution", "Event", "ExactBackend", "GlobalEpsilon", "INF", "Output",
    "RenyiBound", "checked_pair", "event_predicate", "output_order",
]
