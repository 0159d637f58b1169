"""Neighbour relations between inputs: which pairs (x, x') DP compares."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from samplers.lang.domain import Domain

Point = tuple[int, ...]


class Neighbours:
    """A symmetric relation on domain points; ``of`` lists the neighbours of a point."""

    name = "neighbours"

    def contains(self, x: Sequence[int], xp: Sequence[int]) -> bool:
        raise NotImplementedError

    def of(self, x: Point, domain: Domain) -> Iterator[Point]:
        """Every neighbour of ``x`` inside ``domain`` (brute force unless overridden)."""
        return (p for p in domain.points() if self.contains(x, p))

    def pairs(self, domain: Domain) -> Iterator[tuple[Point, Point]]:
        """Every ordered neighbour pair of the domain."""
        for x in domain.points():
            for xp in self.of(x, domain):
                yield x, xp

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, repr=False)
class OneDiffer(Neighbours):
    """Exactly one coordinate differs, by at most ``sensitivity`` (StatDP's one_differ)."""

    sensitivity: int = 1

    @property
    def name(self) -> str:  # type: ignore[override]
        return "one_differ" if self.sensitivity == 1 else f"one_differ(sensitivity={self.sensitivity})"

    def contains(self, x: Sequence[int], xp: Sequence[int]) -> bool:
        diffs = [abs(a - b) for a, b in zip(x, xp) if a != b]
        return len(x) == len(xp) and len(diffs) == 1 and diffs[0] <= self.sensitivity

    def of(self, x: Point, domain: Domain) -> Iterator[Point]:
        for i, v in enumerate(x):
            for w in range(max(domain.lo[i], v - self.sensitivity), min(domain.hi[i], v + self.sensitivity) + 1):
                if w != v:
                    yield x[:i] + (w,) + x[i + 1:]


@dataclass(frozen=True, repr=False)
class AllDiffer(Neighbours):
    """Every coordinate may differ by at most ``sensitivity`` (StatDP's all_differ)."""

    sensitivity: int = 1

    @property
    def name(self) -> str:  # type: ignore[override]
        return "all_differ" if self.sensitivity == 1 else f"all_differ(sensitivity={self.sensitivity})"

    def contains(self, x: Sequence[int], xp: Sequence[int]) -> bool:
        return (
            len(x) == len(xp)
            and tuple(x) != tuple(xp)
            and all(abs(a - b) <= self.sensitivity for a, b in zip(x, xp))
        )

    def of(self, x: Point, domain: Domain) -> Iterator[Point]:
        s = self.sensitivity
        ranges = [range(max(l, v - s), min(h, v + s) + 1) for v, l, h in zip(x, domain.lo, domain.hi)]
        return (p for p in itertools.product(*ranges) if p != x)


@dataclass(frozen=True, repr=False)
class Monotone(Neighbours):
    """Every coordinate moves in the same direction, by at most ``sensitivity``: ``x' - x`` in
    ``[0, s]^n`` or in ``[-s, 0]^n``, not 0 (CheckDP's INCREASING / DECREASING query assumptions).

    DP compares neighbours both ways, so "``x'`` is ``x`` increased" and "``x'`` is ``x``
    decreased" have the same symmetric closure, the union of the two boxes: ``increasing`` and
    ``decreasing`` are one relation under two names (``direction`` is only the name).
    """

    sensitivity: int = 1
    direction: str = "increasing"

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.direction if self.sensitivity == 1 else f"{self.direction}(sensitivity={self.sensitivity})"

    def contains(self, x: Sequence[int], xp: Sequence[int]) -> bool:
        moves = [b - a for a, b in zip(x, xp)]
        s = self.sensitivity
        return (len(x) == len(xp) and any(moves)
                and (all(0 <= m <= s for m in moves) or all(-s <= m <= 0 for m in moves)))

    def of(self, x: Point, domain: Domain) -> Iterator[Point]:
        s = self.sensitivity
        up = [range(v, min(h, v + s) + 1) for v, h in zip(x, domain.hi)]
        down = [range(max(l, v - s), v + 1) for v, l in zip(x, domain.lo)]
        return (p for box in (up, down) for p in itertools.product(*box) if p != x)


class ReplaceOne(Neighbours):
    """Exactly one coordinate (one individual's record) is replaced by any other value."""

    name = "replace_one"

    def contains(self, x: Sequence[int], xp: Sequence[int]) -> bool:
        return len(x) == len(xp) and sum(a != b for a, b in zip(x, xp)) == 1

    def of(self, x: Point, domain: Domain) -> Iterator[Point]:
        for i, v in enumerate(x):
            for w in range(domain.lo[i], domain.hi[i] + 1):
                if w != v:
                    yield x[:i] + (w,) + x[i + 1:]


class Custom(Neighbours):
    """A user predicate ``pred(x, x') -> bool`` (neighbours found by brute force).

    DP compares neighbours both ways, so the relation is the predicate's symmetric
    closure: ``x, x'`` are neighbours when ``pred(x, x')`` or ``pred(x', x)``.  (A
    one-way predicate such as "x' is x minus one" would otherwise let a sweep miss the
    worse direction and prove DP falsely.)
    """

    def __init__(self, pred: Callable[[Point, Point], bool], name: str = "custom") -> None:
        self._pred = pred
        self.name = name

    def contains(self, x: Sequence[int], xp: Sequence[int]) -> bool:
        a, b = tuple(x), tuple(xp)
        return a != b and (bool(self._pred(a, b)) or bool(self._pred(b, a)))


one_differ = OneDiffer()
all_differ = AllDiffer()
replace_one = ReplaceOne()
increasing = Monotone(direction="increasing")
decreasing = Monotone(direction="decreasing")


BY_NAME: dict[str, Neighbours] = {"all_differ": all_differ, "decreasing": decreasing, "increasing": increasing,
                                  "one_differ": one_differ, "replace_one": replace_one}


def custom(pred: Callable[[Point, Point], bool], name: str = "custom") -> Custom:
    """A neighbour relation given by a predicate on pairs of inputs."""
    return Custom(pred, name)


def same_as_named(rel: Neighbours, domain: Domain, limit: int = 400) -> Neighbours | None:
    """The built-in relation (sensitivity 1 or 2) with exactly ``rel``'s pairs on ``domain``, found by
    comparing every pair (None when none is, or the domain has more than ``limit`` points)."""
    if domain.count() > limit:
        return None
    points = list(domain.points())
    mine = {(x, xp) for x in points for xp in points if rel.contains(x, xp)}
    named = [*BY_NAME.values(), *(type(r)(**{**_fields(r), "sensitivity": 2}) for r in BY_NAME.values()
                                  if "sensitivity" in _fields(r))]
    return next((r for r in named if set(r.pairs(domain)) == mine), None)


def _fields(rel: Neighbours) -> dict:
    return {k: getattr(rel, k) for k in ("sensitivity", "direction") if hasattr(rel, k)}
