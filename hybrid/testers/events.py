"""Events (sets of outputs) defined on features, their JSON form and their counts.

Three shapes, all serialisable:

* a **set event**: the feature's value is one of a list of values.  On the identity
  feature of a discrete mechanism its JSON form is just the list of outputs, the form
  exact verifiers take (``verifiers.base.event_predicate``);
* a **threshold event**: a numeric feature ``< alpha`` (StatDP's ``(-inf, alpha)``) or
  ``>= alpha``;
* a **product**: every part holds (StatDP's events for tuple outputs).

Every event answers :meth:`mask` on a batch of samples and :meth:`member` on one
output, so verifiers can compute its exact probability on discrete mechanisms.
:func:`event_candidates` lists the candidate events of one feature with their hit
counts on two batches, all at once (sorting and counting, no loop over events).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from hybrid.formats import number_str, output_str
from hybrid.testers.features import (
    IDENTITY,
    NO_ENTRY,
    Feature,
    entry_of,
    row_keys,
    value_to_json,
)
from samplers.lang.ir import BOTTOM_CODE, INT64_MAX, to_code


def as_batch(output: Any) -> np.ndarray:
    """One output as a batch of one sample (floats give a float batch)."""
    vals = [to_code(v) for v in output] if isinstance(output, (tuple, list)) else [to_code(output)]
    dtype = np.float64 if any(isinstance(v, float) for v in vals) else np.int64
    arr = np.asarray([vals], dtype=dtype)
    return arr if isinstance(output, (tuple, list)) else arr[:, 0]


class Event:
    """A set of outputs."""

    def mask(self, samples: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def member(self, output: Any) -> bool:
        """Whether one output lies in the event."""
        return bool(self.mask(as_batch(output))[0])

    def __call__(self, output: Any) -> bool:  # usable as a verifier predicate
        return self.member(output)

    def to_json(self) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def exact_linear(feature: Feature, output: Any) -> Fraction | None:
    """A linear feature of an output of integers, summed exactly (None for any other case).

    One output is weighed exactly where float64 would round: 0.1 * 1 + 0.2 * 1 is
    0.30000000000000004 in floats, and ``< 0.30000000000000004`` would miss an output
    the event, read in real arithmetic as for continuous noise, contains.
    """
    weights = feature.weights
    if (feature.kind != "linear" or not isinstance(output, tuple) or len(output) != len(weights)
            or not all(type(v) is int for v in output)):
        return None
    return sum((Fraction(w) * v for w, v in zip(weights, output)), Fraction(0))


@dataclass(frozen=True, eq=False)
class SetEvent(Event):
    feature: Feature
    values: tuple

    def mask(self, samples: np.ndarray) -> np.ndarray:
        v = self.feature(samples)
        exact = (entry_of(to_code(e), v.dtype) for e in self.values)
        kept = [c for c in exact if c is not NO_ENTRY]
        if not kept:
            return np.zeros(len(v), dtype=bool)
        if v.ndim == 1:
            return np.isin(v, np.asarray(kept, dtype=v.dtype))
        rows = np.asarray(kept, dtype=v.dtype).reshape(len(kept), v.shape[1])
        keys, want = row_keys(v), row_keys(rows)
        order = np.argsort(want)
        pos = np.searchsorted(want[order], keys).clip(0, len(want) - 1)
        cand = want[order][pos] == keys
        hit = np.zeros(len(v), dtype=bool)
        idx = np.nonzero(cand)[0]
        hit[idx] = (v[idx] == rows[order][pos[idx]]).all(axis=1)  # rule out hash collisions
        return hit

    def member(self, output: Any) -> bool:
        total = exact_linear(self.feature, output)
        if total is None:
            return super().member(output)
        return any(isinstance(w, (int, float)) and math.isfinite(w) and Fraction(w) == total for w in self.values)

    def to_json(self) -> Any:
        vals = [value_to_json(v) for v in self.values]
        if self.feature == IDENTITY:
            return vals
        return {"feature": self.feature.to_json(), "in": vals}

    def describe(self) -> str:
        more = ", ..." if len(self.values) > 6 else ""
        if self.feature.kind == "skeleton":
            shapes = " or ".join(self.feature.shape(v) for v in self.values[:6])
            return f"output shaped {shapes}{more} (* any other number)"
        shown = ", ".join(output_str(v) for v in self.values[:6]) + more
        return f"{self.feature.describe()} in {{{shown}}}"


@dataclass(frozen=True, eq=False)
class Threshold(Event):
    feature: Feature
    alpha: float
    below: bool = True

    def mask(self, samples: np.ndarray) -> np.ndarray:
        v = self.feature(samples)
        if v.dtype.kind in "iu" and math.isfinite(self.alpha):
            # integers compared exactly: as floats, 2^53 + 3 rounds to 2^53 + 4 and leaves "< 2^53 + 4"
            k = math.ceil(self.alpha)  # an integer is below alpha exactly when it is below ceil(alpha)
            hit = v < np.int64(k) if abs(k) <= INT64_MAX else np.full(len(v), k > 0)
            hit = hit if self.below else ~hit
            return hit & (v != BOTTOM_CODE)
        v = numeric(v)
        return v < self.alpha if self.below else v >= self.alpha

    def member(self, output: Any) -> bool:
        total = exact_linear(self.feature, output)
        if total is None or not math.isfinite(self.alpha):
            return super().member(output)
        return total < Fraction(self.alpha) if self.below else total >= Fraction(self.alpha)

    def to_json(self) -> Any:
        key = "below" if self.below else "at_least"
        return {"feature": self.feature.to_json(), key: self.alpha}

    def describe(self) -> str:
        return f"{self.feature.describe()} {'<' if self.below else '>='} {number_str(self.alpha)}"


@dataclass(frozen=True, eq=False)
class Product(Event):
    parts: tuple[Event, ...]

    def mask(self, samples: np.ndarray) -> np.ndarray:
        out = self.parts[0].mask(samples)
        for p in self.parts[1:]:
            out &= p.mask(samples)
        return out

    def member(self, output: Any) -> bool:
        return all(p.member(output) for p in self.parts)

    def to_json(self) -> Any:
        return {"all": [p.to_json() for p in self.parts]}

    def describe(self) -> str:
        """The parts joined by "and"; a run of equal thresholds on consecutive components is one
        clause (``each of output[0..19] < 0``)."""
        runs: list[list[Event]] = []
        for p in self.parts:
            if runs and _continues(runs[-1][-1], p):
                runs[-1].append(p)
            else:
                runs.append([p])
        return " and ".join(_run_text(run) for run in runs)


def _continues(a: Event, b: Event) -> bool:
    return (isinstance(a, Threshold) and isinstance(b, Threshold) and a.feature.kind == b.feature.kind == "component"
            and b.feature.index == a.feature.index + 1 and (a.below, a.alpha) == (b.below, b.alpha))


def _run_text(run: list[Event]) -> str:
    if len(run) < 3:
        return " and ".join(p.describe() for p in run)
    first, last = run[0], run[-1]
    assert isinstance(first, Threshold) and isinstance(last, Threshold)
    return (f"each of output[{first.feature.index}..{last.feature.index}] "
            f"{'<' if first.below else '>='} {number_str(first.alpha)}")


def numeric(v: np.ndarray) -> np.ndarray:
    """Feature values as floats, with the int BOTTOM sentinel as NaN."""
    if v.dtype.kind == "f":
        return v
    out = v.astype(np.float64)
    out[v == BOTTOM_CODE] = np.nan
    return out


# -- candidates and their counts -----------------------------------------------------------

@dataclass
class Candidates:
    """Events with their hit counts on a batch from x (``cx``) and one from x' (``cy``)."""

    events: list[Event]
    cx: np.ndarray
    cy: np.ndarray

    @staticmethod
    def empty() -> "Candidates":
        return Candidates([], np.zeros(0, np.int64), np.zeros(0, np.int64))

    @staticmethod
    def concat(parts: Sequence["Candidates"]) -> "Candidates":
        parts = [p for p in parts if p.events]
        if not parts:
            return Candidates.empty()
        return Candidates([e for p in parts for e in p.events],
                          np.concatenate([p.cx for p in parts]), np.concatenate([p.cy for p in parts]))


def _radix(both: np.ndarray) -> tuple[np.ndarray, int, int] | None:
    """Exact integer codes of values (rows) in a small range: digits ``v - lo + 1``, BOTTOM 0."""
    bottom = both == BOTTOM_CODE
    rest = both[~bottom]
    lo, hi = (int(rest.min()), int(rest.max())) if rest.size else (0, 0)
    base, k = hi - lo + 2, (1 if both.ndim == 1 else both.shape[1])
    if base**k >= 2**62:
        return None
    digits = np.where(bottom, 0, both - (lo - 1))
    codes = digits if both.ndim == 1 else digits @ (base ** np.arange(k, dtype=np.int64))
    return codes, lo, base


def _decode(codes: np.ndarray, lo: int, base: int, k: int | None) -> np.ndarray:
    if k is None:
        return np.where(codes == 0, BOTTOM_CODE, codes + (lo - 1))
    digits = (codes[:, None] // base ** np.arange(k, dtype=np.int64)) % base
    return np.where(digits == 0, BOTTOM_CODE, digits + (lo - 1))


def distinct_counts(vx: np.ndarray, vy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct values (rows) of both batches and their counts in each."""
    both = np.concatenate([vx, vy])
    k = None if both.ndim == 1 else both.shape[1]
    radix = _radix(both)
    if radix is not None and radix[0].max() < 1 << 23:  # small codes: counting, no sorting
        codes, lo, base = radix
        cx = np.bincount(codes[: len(vx)], minlength=int(codes.max()) + 1)
        cy = np.bincount(codes[len(vx):], minlength=len(cx))
        seen = np.nonzero(cx + cy)[0]
        return _decode(seen, lo, base, k), cx[seen], cy[seen]
    keys = radix[0] if radix is not None else row_keys(both)
    uniq, inv = np.unique(keys, return_inverse=True)
    inv = inv.ravel()
    if radix is not None:
        reps = _decode(uniq, radix[1], radix[2], k)
    else:
        first = np.empty(len(uniq), dtype=np.int64)
        first[inv[::-1]] = np.arange(len(keys) - 1, -1, -1)
        reps = both[first]
        if k is not None and not (both == reps[inv]).all():  # a hash collision: exact fallback
            reps, inv = np.unique(both, axis=0, return_inverse=True)
            inv = inv.ravel()
    cx = np.bincount(inv[: len(vx)], minlength=len(reps))
    cy = np.bincount(inv[len(vx):], minlength=len(reps))
    return reps, cx, cy


def _value(rep: Any) -> Any:
    return tuple(int(v) for v in rep) if np.ndim(rep) else int(rep)


def categorical_candidates(feature: Feature, vx: np.ndarray, vy: np.ndarray, max_categories: int) -> Candidates:
    """Single values and unions of the values most in favour of one side (likelihood order)."""
    reps, cx, cy = distinct_counts(vx, vy)
    if len(reps) > max_categories:  # keep the most frequent values only
        top = np.argsort(-(cx + cy), kind="stable")[:max_categories]
        reps, cx, cy = reps[top], cx[top], cy[top]
    values = [_value(r) for r in reps]
    events: list[Event] = [SetEvent(feature, (v,)) for v in values]
    ecx, ecy = [cx], [cy]
    score = np.log((cx + 0.5) / (cy + 0.5))
    for sign in (1, -1):
        order = np.argsort(-sign * score, kind="stable")
        favoured = order[sign * score[order] > 0]
        if len(favoured) < 2:
            continue
        events += [SetEvent(feature, tuple(values[i] for i in favoured[:m])) for m in range(2, len(favoured) + 1)]
        ecx.append(np.cumsum(cx[favoured])[1:])
        ecy.append(np.cumsum(cy[favoured])[1:])
    return Candidates(events, np.concatenate(ecx), np.concatenate(ecy))


def thresholds(values: np.ndarray, count: int = 10) -> np.ndarray:
    """StatDP's thresholds (``count`` points across the densest 70% window) plus quantiles."""
    s = np.sort(values)
    if s.size == 0:
        return np.zeros(0)
    w = int(0.7 * s.size)
    if 0 < w < s.size:
        j = w + int(np.argmin(s[w:] - s[: s.size - w]))
        window = np.linspace(s[j - w], s[j], count)
    else:
        window = np.zeros(0)
    qs = np.quantile(s, [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999])
    return np.unique(np.concatenate([window, qs]))


def threshold_candidates(feature: Feature, vx: np.ndarray, vy: np.ndarray, count: int = 10) -> Candidates:
    """``feature < alpha`` and ``feature >= alpha`` for the thresholds of both batches."""
    fx, fy = numeric(vx), numeric(vy)
    fx, fy = np.sort(fx[~np.isnan(fx)]), np.sort(fy[~np.isnan(fy)])
    alphas = thresholds(np.concatenate([fx, fy]), count)
    bx, by = np.searchsorted(fx, alphas, "left"), np.searchsorted(fy, alphas, "left")
    events: list[Event] = [Threshold(feature, float(a), True) for a in alphas]
    events += [Threshold(feature, float(a), False) for a in alphas]
    return Candidates(events, np.concatenate([bx, len(fx) - bx]), np.concatenate([by, len(fy) - by]))


def product_candidates(cat: Feature, num: Feature, sx: np.ndarray, sy: np.ndarray,
                       top: int = 8, count: int = 10) -> Candidates:
    """``cat == value and num < / >= alpha`` for the ``top`` most frequent values of ``cat``."""
    cx_vals, cy_vals = cat(sx), cat(sy)
    reps, cx, cy = distinct_counts(cx_vals, cy_vals)
    kx, ky = row_keys(cx_vals), row_keys(cy_vals)
    nx, ny = num(sx), num(sy)
    parts = []
    for i in np.argsort(-(cx + cy), kind="stable")[:top]:
        key = row_keys(reps[i: i + 1])[0]
        inner = threshold_candidates(num, nx[kx == key], ny[ky == key], count)
        head = SetEvent(cat, (_value(reps[i]),))
        parts.append(Candidates([Product((head, e)) for e in inner.events], inner.cx, inner.cy))
    return Candidates.concat(parts)


def feature_candidates(feature: Feature, sx: np.ndarray, sy: np.ndarray, max_categories: int) -> Candidates:
    """Candidate events of one feature: categorical when discrete with few values, else thresholds."""
    vx, vy = feature(sx), feature(sy)
    if vx.dtype.kind == "f":
        return threshold_candidates(feature, vx, vy)
    if vx.ndim == 2:
        return categorical_candidates(feature, vx, vy, max_categories)
    cands = categorical_candidates(feature, vx, vy, max_categories)
    if len(cands.events) < max_categories:  # few values: categorical, as StatDP decides
        return cands
    return threshold_candidates(feature, vx, vy)
