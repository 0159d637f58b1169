"""Feature transforms for the classifier attack: sampled outputs to real feature matrices.

A transform is data (:meth:`Transform.to_json`), fitted on training samples, so an
exported attack computes the same features anywhere.  Per output column it is either

* ``onehot``: one indicator per listed value (BOTTOM included as a value), for discrete
  columns with few values; or
* ``numeric``: the value itself, with BOTTOM / NaN and each special code (a float that
  repeats exactly, such as the -1000.0 of value-releasing sparse vectors) replaced by 0
  and flagged in an indicator column of its own (DP-Sniper's FlagsFeatureTransformer,
  with the codes found from the data); under ``auto``, also the indicator
  ``value > cut`` at the training median.  Laplace noise's privacy loss is a clamped
  ramp between the two inputs' values, close to a step at their midpoint when the noise
  is wide, which a linear model of the value alone cannot express (20 parallel Laplace
  releases: the bound goes from 0.015 to 0.04 at eps 0.1).

``joint`` one-hot encodes whole outputs of a discrete mechanism with few distinct
outputs, which lets a linear model express any likelihood-ratio order of them.
Transform names: ``auto`` (joint when at most 64 distinct discrete outputs, else per
column), ``flags`` (numeric with flags for every column), ``onehot``, ``joint``,
``identity`` (raw values; BOTTOM / NaN as 0 plus one flag).  A callable may be given instead; it is
then recorded by name only and an exported attack cannot be re-applied from JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from hybrid.testers.events import distinct_counts, numeric
from hybrid.testers.features import MalformedEvent, atoms, row_keys
from hybrid.formats import output_from_json, output_to_json
from hybrid.testers.kernels import NUMERIC, ONEHOT, column_features
from hybrid.testers.options import TRANSFORMS
from samplers.errors import ParameterError
from samplers.lang.ir import BOTTOM_CODE

JOINT_LIMIT = 64
ONEHOT_LIMIT = 32


@dataclass(frozen=True)
class Column:
    kind: str  # "onehot" or "numeric"
    values: tuple = ()  # onehot: the values; numeric: the flagged special codes
    bottom: bool = False  # numeric: flag BOTTOM / NaN
    cut: float | None = None  # numeric: the step indicator's threshold

    def width(self) -> int:
        numeric_width = 1 + (self.cut is not None) if self.kind == "numeric" else 0
        return len(self.values) + numeric_width + (1 if self.bottom else 0)


@dataclass(frozen=True)
class Transform:
    """A fitted transform (see the module docstring)."""

    name: str
    columns: tuple[Column, ...] = ()
    joint: tuple = ()  # joint outputs, for the "joint" transform
    fn: Callable[[np.ndarray], np.ndarray] | None = None

    @property
    def width(self) -> int:
        if self.fn is not None:
            return -1
        return len(self.joint) if self.joint else sum(c.width() for c in self.columns)

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        if self.fn is not None:
            return np.asarray(self.fn(samples), dtype=np.float64).reshape(len(samples), -1)
        self.check_fits(samples)
        if self.joint:
            return _joint(samples, self.joint)
        f = np.ascontiguousarray(numeric(samples.reshape(len(samples), -1)))
        return column_features(f, *self._tables(), self.width)

    def check_fits(self, samples: np.ndarray) -> None:
        """Refuse outputs of another shape than the transform was fitted on (the kernels do not check)."""
        arity = 1 if samples.ndim == 1 else samples.shape[1]
        fitted = (np.shape(self.joint[0]) or (1,)) if self.joint else (len(self.columns),)
        if fitted != (arity,):
            raise MalformedEvent(f"the feature transform {self.name!r} was fitted on outputs with {fitted[0]} "
                                 f"components, not {arity}")

    def _tables(self) -> tuple[np.ndarray, ...]:
        """The columns as flat arrays for :func:`hybrid.testers.kernels.column_features`."""
        values = [float("nan") if (c.kind == "onehot" and v == BOTTOM_CODE) else float(v)
                  for c in self.columns for v in c.values]
        counts = np.array([len(c.values) for c in self.columns], dtype=np.int64)
        return (np.array([ONEHOT if c.kind == "onehot" else NUMERIC for c in self.columns], dtype=np.int64),
                np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64), counts,
                np.array(values, dtype=np.float64), np.array([c.bottom for c in self.columns], dtype=np.bool_),
                np.array([math.nan if c.cut is None else c.cut for c in self.columns], dtype=np.float64))

    def to_json(self) -> dict[str, Any]:
        if self.fn is not None:
            return {"name": self.name, "custom": True}
        d: dict[str, Any] = {"name": self.name}
        if self.joint:
            d["joint"] = [output_to_json(o) for o in self.joint]
        else:
            d["columns"] = [{"kind": c.kind, "values": [_code_json(v) for v in c.values], "bottom": c.bottom,
                             "cut": c.cut} for c in self.columns]
        return d

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Transform":
        if d.get("custom"):
            raise ParameterError(f"the attack used a custom feature transform {d.get('name')!r}; "
                                 "it cannot be rebuilt from JSON")
        if "joint" in d:
            if not isinstance(d["joint"], list) or not d["joint"]:
                raise MalformedEvent("a joint transform lists its outputs (a nonempty list)")
            joint = tuple(output_from_json(o) for o in d["joint"])
            try:
                np.asarray(joint, dtype=np.int64)  # outputs of one shape, each in int64
            except (ValueError, OverflowError):
                raise MalformedEvent("a joint transform's outputs must be integers (or lists of them) of one shape") from None
            return Transform(str(d["name"]), joint=joint)
        if not isinstance(d["columns"], list) or not d["columns"]:
            raise MalformedEvent("a transform lists its columns (a nonempty list)")
        cols = []
        for c in d["columns"]:
            if c["kind"] not in ("onehot", "numeric") or not isinstance(c["values"], list):
                raise MalformedEvent(f"a transform column is onehot or numeric with a list of values, got {c!r:.80}")
            cut = None if c.get("cut") is None else float(c["cut"])
            cols.append(Column(c["kind"], tuple(_code_from_json(v, c["kind"]) for v in c["values"]),
                               c["bottom"] is True, cut))
        return Transform(str(d["name"]), columns=tuple(cols))


def _code_json(v: Any) -> Any:
    if isinstance(v, float):
        return v
    return output_to_json(v)


def _code_from_json(v: Any, kind: str) -> Any:
    return float(v) if kind == "numeric" else output_from_json(v)


def joint_index(samples: np.ndarray, outputs: tuple) -> np.ndarray:
    """The position of each sample among ``outputs`` (``len(outputs)`` when absent)."""
    rows = np.asarray(outputs, dtype=np.int64).reshape(len(outputs), *samples.shape[1:])
    keys, want = row_keys(samples), row_keys(rows)
    order = np.argsort(want, kind="stable")
    pos = np.searchsorted(want[order], keys).clip(0, len(want) - 1)
    idx = order[pos]
    hit = want[idx] == keys
    if samples.ndim == 2:
        hit[hit] = (samples[hit] == rows[idx[hit]]).all(axis=1)  # rule out hash collisions
    return np.where(hit, idx, len(outputs))


def _joint(samples: np.ndarray, outputs: tuple) -> np.ndarray:
    out = np.zeros((len(samples), len(outputs) + 1))
    out[np.arange(len(samples)), joint_index(samples, outputs)] = 1.0
    return out[:, :-1]


def _distinct(samples: np.ndarray) -> np.ndarray:
    reps, _, _ = distinct_counts(samples, samples[:0])
    return reps


def _numeric_column(v: np.ndarray, step: bool) -> Column:
    f = numeric(v)
    head = f[: 500_000]
    codes = atoms(head)
    cut = None
    if step:
        plain = head[~np.isnan(head) & ~np.isin(head, codes)]
        cut = float(np.median(plain)) if len(plain) else None
    return Column("numeric", codes, bool(np.isnan(f).any()), cut)


def fit_transform(spec: str | Callable[[np.ndarray], np.ndarray], samples: np.ndarray) -> Transform:
    """A transform fitted on ``samples`` (both inputs' training outputs)."""
    if callable(spec):
        return Transform(f"custom:{getattr(spec, '__name__', 'transform')}", fn=spec)
    if spec not in TRANSFORMS:
        raise ParameterError(f"unknown feature transform {spec!r} (known: {', '.join(TRANSFORMS)})")
    discrete = samples.dtype.kind != "f"
    if spec in ("auto", "joint") and discrete:
        outs = _distinct(samples)
        if spec == "joint" or len(outs) <= JOINT_LIMIT:
            return Transform(spec, joint=tuple(_as_output(o) for o in outs))
    cols = samples.reshape(len(samples), -1)
    columns = []
    for j in range(cols.shape[1]):
        v = cols[:, j]
        if spec == "identity":
            columns.append(Column("numeric", (), bool(np.isnan(numeric(v)).any())))
            continue
        if discrete and spec in ("auto", "onehot"):
            vals = _distinct(v)
            if spec == "onehot" or len(vals) <= ONEHOT_LIMIT:
                columns.append(Column("onehot", tuple(int(x) for x in vals)))
                continue
        columns.append(_numeric_column(v, step=spec == "auto"))
    return Transform(spec, columns=tuple(columns))


def _as_output(o: Any) -> Any:
    return tuple(int(v) for v in o) if np.ndim(o) else int(o)

