"""The interface every exact backend implements (enumerate, bdd, smt).

A backend is built for one traced program and answers exact questions about its
output distributions.  Only :meth:`ExactBackend.distribution` is abstract: the other
queries are defined from it here, and backends override them where they can answer
faster (a BDD computes one event's probability without the whole distribution).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence

from samplers.errors import DomainError, UnsupportedByBackend
from samplers.lang.ir import CONTINUOUS_NOISE, Program
from verifiers.ratio import INF, Ratio, ratio

Output = Any  # an int, or a tuple of ints (BOTTOM included)
Event = Iterable[Output] | Callable[[Output], bool]
Distribution = dict[Output, Fraction]


def event_predicate(event: Event) -> Callable[[Output], bool]:
    """A membership test for an event given as a collection of outputs or a predicate."""
    if callable(event):
        return event
    members = {tuple(o) if isinstance(o, list) else o for o in event}
    return members.__contains__


def refuse_continuous(program: Program, backend: str) -> None:
    """Raise UnsupportedByBackend when ``program`` draws continuous noise."""
    cont = sorted({n.op for n in program.nodes if n.op in CONTINUOUS_NOISE})
    if cont:
        raise UnsupportedByBackend(
            f"{program.name} draws continuous noise ({', '.join(cont)}), "
            f"which is not supported by the {backend} backend; use the sampling testers"
        )


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
        a, b = self.check_input(x), self.check_input(xp)
        if not self.program.neighbours.contains(a, b):
            raise DomainError(f"{list(a)} and {list(b)} are not {self.program.neighbours.name} neighbours")
        return a, b

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
        for o in sorted(p, key=_order):
            r = ratio(p[o], q.get(o, Fraction(0)))
            if r > best:
                best, arg = r, o
        return best, arg

    def exists_violation(self, x: Sequence[int], xp: Sequence[int], c: Fraction) -> Output | None:
        """An output ``o`` with ``P(o|x) > c P(o|x')``, or None when there is none."""
        c = Fraction(c)
        p, q = self.distribution(x), self.distribution(xp)
        for o in sorted(p, key=_order):
            if p[o] > c * q.get(o, Fraction(0)):
                return o
        return None


def _order(o: Output) -> Any:
    """A total order on outputs, for deterministic witnesses."""
    return (0, o) if not isinstance(o, tuple) else (1, o)


__all__ = ["Distribution", "Event", "ExactBackend", "INF", "Output", "event_predicate"]
