"""Declared input domains: vectors of bounded integers, possibly sized by parameters."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

from samplers.errors import DomainError, LanguageError
from samplers.memory import check_fits
from samplers.numerals import short_text

Bound = int | str | Callable[[Mapping[str, Any]], int]


def _resolve(spec: Bound, params: Mapping[str, Any], what: str) -> int:
    if callable(spec):
        value = spec(params)
    elif isinstance(spec, str):
        if spec not in params:
            raise LanguageError(f"domain {what} refers to unknown parameter {spec!r}")
        value = params[spec]
    else:
        value = spec
    if isinstance(value, bool) or not isinstance(value, int):
        raise LanguageError(f"domain {what} must be an integer, got {value!r}")
    return value


@dataclass(frozen=True)
class Domain:
    """Per-coordinate integer bounds ``lo[i] <= x[i] <= hi[i]``."""

    lo: tuple[int, ...]
    hi: tuple[int, ...]

    @property
    def size(self) -> int:
        return len(self.lo)

    def count(self) -> int:
        """Number of points in the domain."""
        return math.prod(h - l + 1 for l, h in zip(self.lo, self.hi))

    def single(self) -> bool:
        """Whether the domain holds one point (without :meth:`count`'s product: 11^100000 takes 0.3 s)."""
        return self.lo == self.hi

    def contains(self, x: Sequence[int]) -> bool:
        return len(x) == self.size and all(l <= v <= h for v, l, h in zip(x, self.lo, self.hi))

    def check(self, x: Sequence[Any]) -> tuple[int, ...]:
        """``x`` as a tuple of ints, or a DomainError saying how it falls outside."""
        try:
            vals = tuple(int(v) for v in x)
        except (TypeError, ValueError):
            raise DomainError(f"input {short_text(repr(x))} is not a list of integers") from None
        if any(not isinstance(a, int) and float(a) != b for a, b in zip(x, vals)):
            raise DomainError(f"input {short_text(repr(list(x)))} is not a list of integers")
        if len(vals) != self.size:
            raise DomainError(f"input has {len(vals)} coordinates, the domain has {self.size}")
        for i, (v, l, h) in enumerate(zip(vals, self.lo, self.hi)):
            if not l <= v <= h:
                raise DomainError(f"input coordinate {i} = {short_text(str(v))} is outside the domain {l}..{h}")
        return vals

    def points(self) -> Iterator[tuple[int, ...]]:
        """Every point of the domain, in lexicographic order."""
        return itertools.product(*(range(l, h + 1) for l, h in zip(self.lo, self.hi)))

    def describe(self) -> str:
        if len(set(self.lo)) == 1 and len(set(self.hi)) == 1:
            return f"{{{self.lo[0]}..{self.hi[0]}}}^{self.size}"
        return " x ".join(f"{{{l}..{h}}}" for l, h in zip(self.lo, self.hi))


# Tracing takes 2 to 4.5 KiB per input coordinate on the catalogue (randomized response
# to RAPPOR); the lower end is used, so only what surely cannot fit is refused.
TRACE_BYTES_PER_COORDINATE = 2000


@dataclass(frozen=True)
class IntsSpec:
    """A domain declaration, resolved against parameters by :meth:`resolve`."""

    lo: Bound | Sequence[Bound]
    hi: Bound | Sequence[Bound]
    size: Bound

    def resolve(self, params: Mapping[str, Any]) -> Domain:
        n = _resolve(self.size, params, "size")
        if n < 1:
            raise LanguageError(f"domain size must be at least 1, got {n}")
        which = f"-p {self.size}" if isinstance(self.size, str) else "the input length"
        check_fits(n * TRACE_BYTES_PER_COORDINATE, f"{n} input coordinates", f"lower {which}")

        def per_coord(spec: Any, what: str) -> tuple[int, ...]:
            if isinstance(spec, (list, tuple)):
                if len(spec) != n:
                    raise LanguageError(f"domain {what} lists {len(spec)} bounds for {n} coordinates")
                return tuple(_resolve(s, params, what) for s in spec)
            return (_resolve(spec, params, what),) * n

        lo, hi = per_coord(self.lo, "lo"), per_coord(self.hi, "hi")
        for i, (l, h) in enumerate(zip(lo, hi)):
            if l > h:
                raise LanguageError(f"domain coordinate {i} is empty: {l}..{h}")
        return Domain(lo, hi)


def ints(lo: Bound | Sequence[Bound] = 0, hi: Bound | Sequence[Bound] = 1, size: Bound = 1) -> IntsSpec:
    """Declare a domain of ``size`` integers in ``lo..hi`` (each may name a parameter)."""
    return IntsSpec(lo, hi, size)
