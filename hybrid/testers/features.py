"""Features: post-processings of sampled outputs on which events are defined.

A feature maps a batch of outputs (shape ``(n,)`` or ``(n, k)``) to one value per
output: an integer or a row of integers (categorical) or a float (numeric).  Events
on a feature are events on the output (post-processing), so a violation found on a
feature is a violation of the mechanism.  Features are data (:meth:`to_json`), so a
witness names exactly the set of outputs it stands for.

Why features at all: a tuple output with k components has far too many product events
(StatDP's product of per-component events has 10^k of them for k numeric components).
Instead we offer per-component events, the joint value for discrete outputs, and a few
projections that summarise a whole output (counts of each code, Hamming distance to
StatDP's reference answer, sums and extremes of the numeric entries, and the
"skeleton": which entries are numeric, which are bottom or a special code; ``code``: the
same for one entry, so that a skeleton is a product of per-component events), and
weighted sums of the entries (``linear``: e.g. the increments of a prefix sum, in which
a product of thresholds is a product of independent events).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hybrid.formats import number_str, output_from_json, output_to_json
from samplers.errors import DPHybridError
from samplers.lang.ir import BOTTOM_CODE

_HASH = np.array(  # odd 64-bit multipliers for row keys (wrap-around arithmetic)
    [(0x9E3779B97F4A7C15 * (2 * i + 1)) % 2**64 - 2**63 for i in range(1, 257)], dtype=np.int64
)


def _weighted_sum(weights: tuple) -> str:
    """``output[1] - output[0]``, ``2*output[0] + 0.5*output[2]``: the nonzero terms, positive ones first."""
    text = ""
    for j, w in sorted(enumerate(weights), key=lambda jw: jw[1] < 0):
        if not w:
            continue
        term = f"output[{j}]" if abs(w) == 1 else f"{number_str(abs(w))}*output[{j}]"
        sign = ("-" if w < 0 else "") if not text else (" - " if w < 0 else " + ")
        text += sign + term
    return text or "0"


class MalformedEvent(DPHybridError):
    """An event or feature given as JSON could not be read."""


def row_keys(rows: np.ndarray) -> np.ndarray:
    """One int64 key per row of an int64 matrix (a hash; callers verify equality)."""
    if rows.ndim == 1:
        return rows.astype(np.int64, copy=False)
    k = rows.shape[1]
    mult = _HASH[np.arange(k) % len(_HASH)] ^ np.int64(k)
    with np.errstate(over="ignore"):
        return (rows.astype(np.int64, copy=False) * mult).sum(axis=1)


def _bottom(samples: np.ndarray) -> np.ndarray:
    """Mask of the bottom entries: NaN in float samples, the BOTTOM code in integer ones."""
    return np.isnan(samples) if samples.dtype.kind == "f" else samples == BOTTOM_CODE


def _regular(samples: np.ndarray, codes: tuple[float, ...]) -> np.ndarray:
    """Mask of the numeric entries: not bottom and not a special code."""
    ok = ~_bottom(samples)
    for c in codes:
        c = entry_of(c, samples.dtype)
        if c is not NO_ENTRY:
            ok &= samples != c
    return ok


NO_ENTRY = object()  # what entry_of gives for a value no array entry can equal


def entry_of(value: Any, dtype: np.dtype) -> Any:
    """``value`` (a number or a tuple of them) as entries of a ``dtype`` array compare it
    exactly, or :data:`NO_ENTRY` when no entry can equal it.

    Casting would change it (0.5 among integer outputs becomes 0, and numpy compares an
    integer array with 2.0**53 in floats, where 2^53 + 1 equals it): an event on such a
    value would then be certified for other outputs than the ones it names.
    """
    if isinstance(value, tuple):
        parts = tuple(entry_of(x, dtype) for x in value)
        return NO_ENTRY if any(p is NO_ENTRY for p in parts) else parts
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return value  # not a number: left to numpy
    if np.issubdtype(dtype, np.integer):
        if isinstance(value, (float, np.floating)):
            if not float(value).is_integer():
                return NO_ENTRY
            value = int(value)
        info = np.iinfo(dtype)
        return int(value) if info.min <= value <= info.max else NO_ENTRY
    if isinstance(value, (int, np.integer)):
        try:
            return value if float(value) == value else NO_ENTRY
        except OverflowError:
            return NO_ENTRY
    return value


def _integer(v: Any) -> int:
    """An integer from JSON; ``int()`` would truncate 0.5 to 0 and change the event the file states."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{v!r} is not an integer")
    return v


@dataclass(frozen=True)
class Feature:
    """A named post-processing: ``kind`` selects the map, the other fields parametrise it."""

    kind: str
    index: int = 0
    value: Any = None
    reference: tuple = ()
    codes: tuple = ()
    weights: tuple = ()

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        s = samples
        if self.kind == "identity":
            return s
        if s.ndim != 2:
            raise ValueError(f"feature {self.kind} needs tuple outputs")
        if self.kind == "component":
            return s[:, self.index]
        if self.kind == "count":
            if self.value == "bottom":
                hit = _bottom(s)
            else:
                value = entry_of(self.value, s.dtype)
                hit = np.zeros(s.shape, dtype=bool) if value is NO_ENTRY else s == value
            return hit.sum(axis=1).astype(np.int64)
        if self.kind == "hamming":
            return (s != np.asarray(self.reference, dtype=s.dtype)).sum(axis=1).astype(np.int64)
        if self.kind in ("sum", "max", "min"):
            ok = _regular(s, self.codes)
            if self.kind == "sum":
                return np.where(ok, s, 0.0).sum(axis=1)
            fill = -np.inf if self.kind == "max" else np.inf
            red = np.where(ok, s, fill)
            out = red.max(axis=1) if self.kind == "max" else red.min(axis=1)
            return np.where(ok.any(axis=1), out, np.nan)
        if self.kind == "linear":  # a weighted sum of the entries (NaN when one is bottom)
            return np.where(_bottom(s), np.nan, s) @ np.asarray(
                self.weights, dtype=np.float64)
        if self.kind in ("skeleton", "code"):
            if self.kind == "code":
                s = s[:, self.index]
            code = np.zeros(s.shape, dtype=np.int64)
            code[_bottom(s)] = 1
            for j, c in enumerate(self.codes):
                c = entry_of(c, s.dtype)
                if c is not NO_ENTRY:
                    code[s == c] = 2 + j
            return code
        raise ValueError(f"unknown feature kind {self.kind!r}")

    def describe(self) -> str:
        if self.kind == "identity":
            return "output"
        if self.kind == "component":
            return f"output[{self.index}]"
        if self.kind == "count":
            return f"count of {output_to_json(self.value) if self.value != 'bottom' else 'bottom'}"
        if self.kind == "hamming":
            return f"Hamming distance to {list(self.reference)}"
        if self.kind in ("sum", "max", "min"):
            return f"{self.kind} of numeric entries"
        if self.kind == "linear":
            return _weighted_sum(self.weights)
        what = "skeleton" if self.kind == "skeleton" else f"code of output[{self.index}]"
        return what + " (0 numeric, 1 bottom, 2+j code j of " + str(list(self.codes)) + ")"

    def shape(self, skeleton: tuple) -> str:
        """A value of the skeleton feature as the outputs it stands for: ``(*, ⊥, -1000)``."""
        marks = ["*" if c == 0 else "⊥" if c == 1 else number_str(self.codes[c - 2]) for c in skeleton]
        return "(" + ", ".join(marks) + ")"

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        if self.kind in ("component", "code"):
            d["index"] = self.index
        if self.kind == "count":
            d["value"] = self.value if self.value == "bottom" else _scalar_json(self.value)
        if self.kind == "hamming":
            d["reference"] = list(self.reference)
        if self.kind in ("sum", "max", "min", "skeleton", "code"):
            d["codes"] = list(self.codes)
        if self.kind == "linear":
            d["weights"] = list(self.weights)
        return d

    @staticmethod
    def from_json(d: Any) -> "Feature":
        try:
            kind = d["kind"]
            if kind == "component":
                return Feature(kind, index=_integer(d["index"]))
            if kind == "count":
                value = d["value"]  # one entry's value: a list would be compared column by column
                if value != "bottom" and (isinstance(value, bool) or not isinstance(value, (int, float))):
                    raise ValueError(f"a count needs a number or 'bottom', got {value!r:.40}")
                return Feature(kind, value=value)
            if kind == "hamming":
                return Feature(kind, reference=tuple(_integer(v) for v in d["reference"]))
            if kind in ("sum", "max", "min", "skeleton"):
                return Feature(kind, codes=_codes(d.get("codes", ())))
            if kind == "code":
                return Feature(kind, index=_integer(d["index"]), codes=_codes(d.get("codes", ())))
            if kind == "linear":
                weights = tuple(float(w) for w in d["weights"])
                if not weights or not all(math.isfinite(w) for w in weights):
                    raise ValueError("weights must be a non-empty list of finite numbers")
                return Feature(kind, weights=weights)
            if kind == "identity":
                return Feature(kind)
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise MalformedEvent(f"malformed feature {d!r:.80}: {e}") from None
        raise MalformedEvent(f"unknown feature kind {d.get('kind')!r}" if isinstance(d, dict) else f"malformed feature {d!r}")


IDENTITY = Feature("identity")


def _codes(values: Any) -> tuple[float, ...]:
    """A feature's codes from JSON: numbers, none of them NaN (a NaN code would match no output)."""
    out = []
    for c in values:
        if isinstance(c, bool) or not isinstance(c, (int, float)) or math.isnan(c):
            raise ValueError(f"a code must be a number other than NaN, got {c!r:.40}")
        out.append(float(c))
    return tuple(out)


def _scalar_json(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "bottom"
    return output_to_json(v)


def value_to_json(v: Any) -> Any:
    """A feature value (an int, a float or a tuple of them) as JSON."""
    return output_to_json(v)


def value_from_json(v: Any) -> Any:
    """Inverse of :func:`value_to_json` (floats kept as floats)."""
    if isinstance(v, list):
        return tuple(value_from_json(e) for e in v)
    if isinstance(v, float):
        return v
    try:
        return output_from_json(v)
    except DPHybridError as e:
        raise MalformedEvent(str(e)) from None


def statdp_reference(k: int) -> tuple[int, ...]:
    """StatDP's reference answer for Hamming-distance post-processing: half True, half False."""
    return tuple([1] * (k // 2) + [0] * (k - k // 2))


def atoms(samples: np.ndarray, min_share: float = 1e-3) -> tuple[float, ...]:
    """Float values that repeat exactly with positive mass (special codes such as -1000.0)."""
    flat = samples.ravel()
    flat = flat[~np.isnan(flat)][:2_000_000]
    if flat.size == 0:
        return ()
    vals, counts = np.unique(flat, return_counts=True)
    need = max(5, int(min_share * flat.size))
    return tuple(float(v) for v in vals[counts >= need])


def default_features(sx: np.ndarray, sy: np.ndarray) -> list[Feature]:
    """The feature families for outputs shaped like ``sx`` (see the module docstring)."""
    if sx.ndim == 1:
        return [IDENTITY]
    k = sx.shape[1]
    comps = [Feature("component", index=j) for j in range(k)]
    both = np.concatenate([sx, sy])
    if sx.dtype.kind != "f":
        values = np.unique(both[: 200_000])
        feats = [IDENTITY, *comps]
        if len(values) <= 12:
            feats += [Feature("count", value="bottom" if v == BOTTOM_CODE else int(v)) for v in values]
        if set(values.tolist()) <= {0, 1, BOTTOM_CODE}:
            feats.append(Feature("hamming", reference=statdp_reference(k)))
        return feats
    codes = atoms(both)
    feats = list(comps)
    if np.isnan(both).any():
        feats.append(Feature("count", value="bottom"))
    feats += [Feature("count", value=c) for c in codes]
    feats += [Feature(op, codes=codes) for op in ("sum", "max", "min")]
    if codes or np.isnan(both).any():
        feats.append(Feature("skeleton", codes=codes))
    return feats
