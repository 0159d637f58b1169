"""Input pairs to test: StatDP's eight patterns and a randomised neighbour search.

The patterns (Ding et al. 2018, ``generate_databases``; DP-Sniper reuses them) compare
``d1 = [1]*n`` with a ``d2`` that moves one or every coordinate by one; ``one_differ``
mechanisms get the first two, every other relation all eight.  Values 0..2 are
clipped to the declared domain, pairs that clipping collapses or that are not
neighbours under the mechanism's relation are dropped, and both orders are kept
(DP-Sniper's convention: the attack and the events are one-sided).

When the patterns are not enough, :func:`random_pair` draws a random neighbour pair
and :func:`local_move` perturbs a pair while keeping it a neighbour pair; the
:func:`neighbour_search` hill-climbs with them on any score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from samplers.lang.domain import Domain
from samplers.lang.neighbours import AllDiffer, Monotone, Neighbours, OneDiffer, ReplaceOne

Point = tuple[int, ...]


@dataclass(frozen=True)
class Pair:
    """An ordered pair of neighbouring inputs and where it came from."""

    x: Point
    x_prime: Point
    origin: str = "pattern"

    def swapped(self) -> "Pair":
        suffix = " (swapped)"
        origin = self.origin[: -len(suffix)] if self.origin.endswith(suffix) else self.origin + suffix
        return Pair(self.x_prime, self.x, origin)

    def to_json(self) -> dict:
        return {"x": list(self.x), "x_prime": list(self.x_prime), "origin": self.origin}


ONE_DIFFER_PATTERNS = ("one below", "one above")
ALL_PATTERNS = ONE_DIFFER_PATTERNS + (
    "one above rest below", "one below rest above", "half half", "all above", "all below", "x shape",
)


def pattern(name: str, n: int) -> tuple[list[int], list[int]]:
    """StatDP's pattern ``name`` for inputs of length ``n``: ``(d1, d2)`` with values 0..2."""
    h = n // 2
    ones = [1] * n
    table = {
        "one below": (ones, [0] + [1] * (n - 1)),
        "one above": (ones, [2] + [1] * (n - 1)),
        "one above rest below": (ones, [2] + [0] * (n - 1)),
        "one below rest above": (ones, [0] + [2] * (n - 1)),
        "half half": (ones, [2] * h + [0] * (n - h)),
        "all above": (ones, [2] * n),
        "all below": (ones, [0] * n),
        "x shape": ([1] * h + [0] * (n - h), [0] * h + [1] * (n - h)),
    }
    if name not in table:
        raise KeyError(f"unknown pattern {name!r} (known: {', '.join(ALL_PATTERNS)})")
    return table[name]


def _clip(v: Sequence[int], domain: Domain) -> Point:
    return tuple(min(max(int(a), lo), hi) for a, lo, hi in zip(v, domain.lo, domain.hi))


def pattern_pairs(domain: Domain, neighbours: Neighbours, *, both_orders: bool = True) -> list[Pair]:
    """The StatDP patterns for this domain and relation (clipped, deduplicated, checked)."""
    names = ONE_DIFFER_PATTERNS if isinstance(neighbours, OneDiffer) else ALL_PATTERNS
    out: list[Pair] = []
    seen: set[tuple[Point, Point]] = set()
    for name in names:
        d1, d2 = pattern(name, domain.size)
        a, b = _clip(d1, domain), _clip(d2, domain)
        if a == b or not neighbours.contains(a, b):
            continue
        for pair in ((Pair(a, b, name), Pair(b, a, name + " (swapped)")) if both_orders else (Pair(a, b, name),)):
            if (pair.x, pair.x_prime) not in seen:
                seen.add((pair.x, pair.x_prime))
                out.append(pair)
    return out


def random_point(domain: Domain, rng: np.random.Generator) -> Point:
    """A uniformly random point of the domain."""
    return tuple(int(rng.integers(lo, hi + 1)) for lo, hi in zip(domain.lo, domain.hi))


def random_neighbour(x: Point, domain: Domain, neighbours: Neighbours, rng: np.random.Generator) -> Point | None:
    """A random neighbour of ``x`` (None when ``x`` has none)."""
    n = domain.size
    for _ in range(64):
        if isinstance(neighbours, AllDiffer):
            s = neighbours.sensitivity
            cand = _clip([v + int(rng.integers(-s, s + 1)) for v in x], domain)
        elif isinstance(neighbours, OneDiffer):
            i, s = int(rng.integers(n)), neighbours.sensitivity
            step = int(rng.integers(1, s + 1)) * (1 if rng.random() < 0.5 else -1)
            cand = x[:i] + _clip([x[i] + step], Domain((domain.lo[i],), (domain.hi[i],))) + x[i + 1:]
        elif isinstance(neighbours, Monotone):
            sign, s = (1 if rng.random() < 0.5 else -1), neighbours.sensitivity
            cand = _clip([v + sign * int(rng.integers(0, s + 1)) for v in x], domain)
        elif isinstance(neighbours, ReplaceOne):
            i = int(rng.integers(n))
            cand = x[:i] + (int(rng.integers(domain.lo[i], domain.hi[i] + 1)),) + x[i + 1:]
        else:
            break
        if cand != x and neighbours.contains(x, cand):
            return cand
    every = list(neighbours.of(x, domain))  # a custom relation, or rejection failed
    return every[int(rng.integers(len(every)))] if every else None


def random_pair(domain: Domain, neighbours: Neighbours, rng: np.random.Generator) -> Pair:
    """A random neighbour pair: a uniform point and a random neighbour of it."""
    for _ in range(1000):
        x = random_point(domain, rng)
        xp = random_neighbour(x, domain, neighbours, rng)
        if xp is not None:
            return Pair(x, xp, "random")
    raise ValueError(f"no neighbour pair found in the domain {domain.describe()} under {neighbours.name}")


def local_move(pair: Pair, domain: Domain, neighbours: Neighbours, rng: np.random.Generator) -> Pair:
    """A nearby pair: move one coordinate of both inputs, or re-draw x' as a neighbour of x."""
    x, xp = pair.x, pair.x_prime
    for _ in range(64):
        if rng.random() < 0.5:
            i, step = int(rng.integers(domain.size)), (1 if rng.random() < 0.5 else -1)
            one = Domain((domain.lo[i],), (domain.hi[i],))
            a = x[:i] + _clip([x[i] + step], one) + x[i + 1:]
            b = xp[:i] + _clip([xp[i] + step], one) + xp[i + 1:]
        else:
            a, b = x, random_neighbour(x, domain, neighbours, rng)
        if b is not None and (a, b) != (x, xp) and neighbours.contains(a, b):
            return Pair(a, b, "local move")
    return pair


def coordinate_moves(pair: Pair, domain: Domain, neighbours: Neighbours, came_from: Pair | None = None) -> Iterator[Pair]:
    """Every pair one step away: one coordinate of x, of x' or of both moved by one.

    Deterministic, so an exact local search explores the whole neighbourhood of its
    current pair (random moves can miss the one that pays).  With ``came_from`` (the pair
    the search moved from), the same step again comes first: a climb that pays along a
    coordinate keeps going without rescanning the moves before it.
    """
    x, xp = pair.x, pair.x_prime
    if came_from is not None:
        a = tuple(2 * u - v for u, v in zip(x, came_from.x))
        b = tuple(2 * u - v for u, v in zip(xp, came_from.x_prime))
        if a != b and domain.contains(a) and domain.contains(b) and neighbours.contains(a, b):
            yield Pair(a, b, "local search")
    for i in range(domain.size):
        for dx, dxp in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, -1)):
            a, b = x[i] + dx, xp[i] + dxp
            if not (domain.lo[i] <= a <= domain.hi[i] and domain.lo[i] <= b <= domain.hi[i]):
                continue
            na, nb = x[:i] + (a,) + x[i + 1:], xp[:i] + (b,) + xp[i + 1:]
            if na != nb and neighbours.contains(na, nb):
                yield Pair(na, nb, "local search")


def neighbour_search(
    score: Callable[[Pair], float],
    domain: Domain,
    neighbours: Neighbours,
    *,
    starts: Sequence[Pair] = (),
    random_starts: int = 4,
    steps: int = 20,
    seed: int = 0,
) -> list[tuple[float, Pair]]:
    """Hill-climb on ``score`` (higher is better) from the given and random starting pairs.

    Returns every pair scored, best first, so callers can keep several candidates.
    """
    rng = np.random.default_rng(seed)
    scored: dict[tuple[Point, Point], tuple[float, Pair]] = {}

    def evaluate(p: Pair) -> float:
        key = (p.x, p.x_prime)
        if key not in scored:
            scored[key] = (score(p), p)
        return scored[key][0]

    begin = list(starts) + [random_pair(domain, neighbours, rng) for _ in range(random_starts)]
    for current in begin:
        best = evaluate(current)
        for _ in range(steps):
            cand = local_move(current, domain, neighbours, rng)
            s = evaluate(cand)
            if s > best:
                current, best = cand, s
    return sorted(scored.values(), key=lambda sp: -sp[0])

