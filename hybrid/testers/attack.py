"""A fitted threshold attack S(t, q) as data: transform, model weights, threshold, pair.

``S(o) = 1`` when ``score(o) > t``, ``q`` when ``score(o) == t``, ``0`` otherwise
(DP-Sniper's randomised threshold attack).  The score is a classifier's log-odds that
``o`` came from x rather than x', evaluated by :meth:`Model.scores` with a fixed order
of elementwise float64 operations, so the same output always gets the same score, in a
batch of any size or alone: an exact verifier can recompute ``S`` on the support of a
discrete mechanism and certify ``P(M(x) in S) / P(M(x') in S)`` exactly, as
``P(score > t) + q P(score == t)`` from the two set events :meth:`Attack.mask` and
:meth:`Attack.ties`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hybrid.testers.events import Event
from hybrid.testers.features import MalformedEvent
from hybrid.testers.kernels import linear_scores
from hybrid.testers.transforms import Transform, joint_index

BATCH = 1 << 18


@dataclass(frozen=True, eq=False)
class Model:
    """Standardisation then dense layers (ReLU between them); the last layer gives the log-odds."""

    kind: str  # "logistic" or "mlp"
    mean: np.ndarray
    scale: np.ndarray
    weights: tuple[np.ndarray, ...]  # (d_in, d_out) per layer
    biases: tuple[np.ndarray, ...]

    def scores(self, features: np.ndarray) -> np.ndarray:
        if len(self.weights) == 1:  # logistic: one pass in numba, same float operations
            return linear_scores(np.ascontiguousarray(features, dtype=np.float64), self.mean, self.scale,
                                 np.ascontiguousarray(self.weights[0][:, 0]), float(self.biases[0][0]))
        h = [(features[:, j] - self.mean[j]) / self.scale[j] for j in range(features.shape[1])]
        for layer, (w, b) in enumerate(zip(self.weights, self.biases)):
            out = []
            for k in range(w.shape[1]):
                acc = np.full(len(features), b[k])
                for j, col in enumerate(h):
                    acc = acc + col * w[j, k]
                out.append(acc if layer == len(self.weights) - 1 else np.maximum(acc, 0.0))
            h = out
        return h[0]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "weights": [w.tolist() for w in self.weights], "biases": [b.tolist() for b in self.biases]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Model":
        m = Model(d["kind"], np.asarray(d["mean"], float), np.asarray(d["scale"], float),
                  tuple(np.asarray(w, float).reshape(len(w), -1) for w in d["weights"]),
                  tuple(np.asarray(b, float).ravel() for b in d["biases"]))
        m.check()
        return m

    def check(self, width: int | None = None) -> None:
        """Shapes that chain (``width`` features in, one score out) and finite numbers.

        The numba scorer does not check bounds, so a model read from a file is checked here.
        """
        def bad(why: str) -> MalformedEvent:
            return MalformedEvent(f"malformed attack model: {why}")

        if self.kind not in ("logistic", "mlp"):
            raise bad(f"kind must be logistic or mlp, got {self.kind!r:.40}")
        d_in = len(self.mean) if width is None else width
        if self.mean.shape != (d_in,) or self.scale.shape != (d_in,):
            raise bad(f"mean and scale must have one entry per feature ({d_in})")
        if not self.weights or len(self.weights) != len(self.biases):
            raise bad("it needs one bias vector per weight matrix, and at least one layer")
        for w, b in zip(self.weights, self.biases):
            if w.ndim != 2 or w.shape[0] != d_in or b.shape != (w.shape[1],):
                raise bad("the layers' shapes do not chain")
            d_in = w.shape[1]
        if d_in != 1:
            raise bad("the last layer must give one score")
        arrays = (self.mean, self.scale, *self.weights, *self.biases)
        if not all(np.isfinite(a).all() for a in arrays) or (self.scale == 0).any():
            raise bad("every number must be finite and every scale nonzero")


@dataclass(frozen=True, eq=False)
class Attack(Event):
    """The exported attack; as an :class:`Event`, ``mask`` is its sure part ``score > t``."""

    x: tuple[int, ...]
    x_prime: tuple[int, ...]
    transform: Transform
    model: Model
    t: float
    q: float
    c: float
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def scores(self, samples: np.ndarray) -> np.ndarray:
        if self.transform.joint:  # a score per joint output (and one for unseen outputs)
            self.transform.check_fits(samples)
            return self._table()[joint_index(samples, self.transform.joint)]
        if len(samples) <= BATCH:
            return self.model.scores(self.transform(samples))
        return np.concatenate([self.scores(samples[i: i + BATCH]) for i in range(0, len(samples), BATCH)])

    def _table(self) -> np.ndarray:
        """Scores of the joint outputs and of an unseen one, computed once.

        Each is the score of that one output (elementwise arithmetic), so the table is
        exactly what scoring the outputs one by one gives.
        """
        if "table" not in self._cache:
            k = len(self.transform.joint)
            self._cache["table"] = self.model.scores(np.vstack([np.eye(k), np.zeros((1, k))]))
        return self._cache["table"]

    def mask(self, samples: np.ndarray) -> np.ndarray:
        return self.scores(samples) > self.t

    def ties(self, samples: np.ndarray) -> np.ndarray:
        """The outputs the attack keeps with probability ``q``."""
        return self.scores(samples) == self.t

    def weights(self, samples: np.ndarray) -> np.ndarray:
        """``S(o)`` for every sample: 1, q or 0."""
        s = self.scores(samples)
        return np.where(s > self.t, 1.0, np.where(s == self.t, self.q, 0.0))

    def to_json(self) -> Any:
        return {"attack": {"x": list(self.x), "x_prime": list(self.x_prime),
                           "transform": self.transform.to_json(), "model": self.model.to_json(),
                           "t": self.t, "q": self.q, "c": self.c}}

    @staticmethod
    def from_json(obj: Any) -> "Attack":
        try:
            a = obj["attack"]
            attack = Attack(tuple(a["x"]), tuple(a["x_prime"]), Transform.from_json(a["transform"]),
                            Model.from_json(a["model"]), float(a["t"]), float(a["q"]), float(a["c"]))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise MalformedEvent(f"malformed attack: {e!s:.200}") from None
        attack.model.check(attack.transform.width)
        if math.isnan(attack.t) or not 0 <= attack.q <= 1:
            raise MalformedEvent(f"malformed attack: threshold t {attack.t} or tie probability q {attack.q} out of range")
        return attack

    def describe(self) -> str:
        return attack_summary(self.model.kind, self.transform.name, self.t, self.q, self.c)


def attack_summary(kind: str, transform: str, t: float, q: float, c: float) -> str:
    """An attack in one line (also from its JSON form, which may not rebuild: a custom transform)."""
    return f"{kind} attack (transform {transform}): score > {t:.6g}, ties kept with probability {q:.4g} (level c = {c:g})"
