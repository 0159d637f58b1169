"""Good events for mechanisms that release continuous values, built on their exact structure.

For a pair ``(x, x')`` the symbolic paths (:mod:`verifiers.paths`) say what each output
component is: a constant (a code such as SVT's -1000.0, or bottom) or an affine form in
the noise.  The *skeleton* of an output marks each component as numeric (0), bottom (1)
or code j (2 + j): a finite part, whose most discriminating values are chosen from
samples of both inputs.  On the numeric components of a skeleton, the event adds
thresholds ``v >= a`` or ``v < a``, tuned one component at a time on the certified ratio
(coordinate ascent); the candidate thresholds sit at the components' offsets under x
and x' plus multiples of their noise scale, which is where a Laplace-type likelihood
ratio saturates (for the Laplace mechanism, ``[a, inf)`` with ``a`` at or above both
offsets has ratio exactly ``e^eps``).

When the output is an invertible affine image of independent noise (a prefix sum), the
thresholds are put on the *whitened* coordinates (``linear`` features with the inverse
matrix's rows, when those are exact floats), where a product of thresholds is a product
of independent events and the ratios multiply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from hybrid.events import Event, Product, SetEvent, Threshold, distinct_counts
from hybrid.features import IDENTITY, Feature
from hybrid.regions import symbolic
from samplers.lang.ir import BOTTOM, BOTTOM_CODE, INT, Program
from verifiers.continuous import ContinuousBackend
from verifiers.enclosure import RatioEnclosure
from verifiers.linear import Form, add, scale
from verifiers.paths import Specialised
from verifiers.ratio import INF

STEPS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0)  # threshold offsets, in noise scales
MAX_OFFSETS = 4  # distinct component offsets a threshold grid is built around
SKELETONS = 3  # skeletons tuned per pair
MAX_INT_CODES = 64  # an integer output with a wider range is not a code


@dataclass
class Tuned:
    """An event and its certified ratio enclosure on one pair (at the coarse level)."""

    event: Event | None  # None: the whole output space
    ratio: RatioEnclosure
    evaluations: int


def _is_bottom(v: Any) -> bool:
    return not isinstance(v, (Form, Fraction)) and v == BOTTOM_CODE


def _components(output: Any) -> tuple:
    return output if isinstance(output, tuple) else (output,)


def output_constants(spec: Specialised) -> list[float]:
    """Constant values a (specialised) program's outputs can take with positive probability:
    the constants an ``ite`` may choose, the bounds of a ``clamp``, and every value of an
    integer node (a comparison's 0 or 1) released among floats."""
    out: list[float] = []
    seen: set[int] = set()
    stack = list(spec.outputs)
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        n = spec.nodes[i]
        if n.op == "const":
            if not _is_bottom(n.attr):
                out.append(float(n.attr))
        elif n.kind == INT and n.op != "ite" and n.hi - n.lo <= MAX_INT_CODES:
            out += [float(v) for v in range(int(n.lo), int(n.hi) + 1)]
        elif n.op == "ite":
            stack += n.args[1:]
        elif n.op in ("max", "min"):
            stack += n.args
        elif n.op == "clamp":
            out += [float(b) for b in n.attr]
    return out


def sample_skeletons(samples: np.ndarray, codes: tuple[float, ...]) -> np.ndarray:
    """The skeletons of sampled (float) outputs, one row per sample."""
    s = samples.reshape(len(samples), -1)
    code = np.zeros(s.shape, dtype=np.int64)
    code[np.isnan(s)] = 1
    for j, c in enumerate(codes):
        code[s == c] = 2 + j
    return code


def _noise_scale(form: Form, laws: dict) -> float:
    return float(sum(abs(a) * laws[v].scale for v, a in form.coeffs))


def _whitening(forms: Sequence[Form]) -> list[tuple[float, ...]] | None:
    """Rows of the inverse of the forms' coefficient matrix, when it is square, invertible,
    not diagonal and exactly representable in floats; else None."""
    variables = sorted({v for f in forms for v in f.variables})
    n = len(forms)
    if len(variables) != n or all(len(f.coeffs) == 1 for f in forms):
        return None
    a = [[f.coeff(v) for v in variables] + [Fraction(int(i == j)) for j in range(n)] for i, f in enumerate(forms)]
    for col in range(n):  # Gauss-Jordan over the rationals
        pivot = next((r for r in range(col, n) if a[r][col] != 0), None)
        if pivot is None:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        a[col] = [v / a[col][col] for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0:
                a[r] = [v - a[r][col] * w for v, w in zip(a[r], a[col])]
    # row i of a[:, n:] maps outputs to the i-th variable; use it as the i-th whitened coordinate
    rows = [tuple(a[i][n:]) for i in range(n)]
    if any(Fraction(float(w)) != w for row in rows for w in row):
        return None
    return [tuple(float(w) for w in row) for row in rows]


def _combine(weights: Sequence[float], values: Sequence[Any]) -> Any:
    total: Any = Fraction(0)
    for w, v in zip(weights, values):
        total = add(total, scale(v, Fraction(w)))
    return total


class EventTuner:
    """Builds and tunes events for pairs of one numeric-output program (see the module docstring)."""

    def __init__(self, backend: ContinuousBackend, sampler: Any, seed: int, samples: int = 100_000) -> None:
        self.backend = backend
        self.program: Program = backend.program
        self.sampler = sampler
        self.seed = seed
        self.samples = samples
        self.evaluations = 0

    # -- structure of a pair -------------------------------------------------------------
    def _ratio(self, x, xp, event: Event | None) -> RatioEnclosure:
        self.evaluations += 1
        sym = symbolic(event, arity=self.program.arity, tuple_output=self.program.tuple_output) \
            if event is not None else (lambda run: 1)
        p = self.backend.event_probability(x, sym)
        q = self.backend.event_probability(xp, sym)
        return RatioEnclosure.of(p, q)

    def _head(self, skel: tuple[int, ...], codes: tuple[float, ...]) -> Event | None:
        """The skeleton as an event (None when every component is numeric)."""
        if not any(skel):
            return None
        if self.program.tuple_output:
            return SetEvent(Feature("skeleton", codes=codes), (skel,))
        return SetEvent(IDENTITY, (BOTTOM if skel[0] == 1 else codes[skel[0] - 2],))

    def _outputs(self, x: Sequence[int], head: Event | None) -> list[Any]:
        """The outputs (constants and forms) of the paths of ``x`` inside the skeleton ``head``."""
        member = symbolic(head, arity=self.program.arity, tuple_output=self.program.tuple_output) \
            if head is not None else (lambda run: 1)
        return [p.result[0] for p in self.backend.paths(x, lambda run: (run.outputs(),) if member(run) else None)]

    def tune(self, x: Sequence[int], xp: Sequence[int]) -> Tuned:
        """The best event found for the pair, with its coarse certified ratio."""
        codes = tuple(sorted(set(output_constants(self.backend.specialised(x)))
                             | set(output_constants(self.backend.specialised(xp)))))
        best = Tuned(None, RatioEnclosure(Fraction(1), Fraction(1)), 0)
        for skel in self._skeletons(x, xp, codes):
            head = self._head(skel, codes)
            mine = self._outputs(x, head) + self._outputs(xp, head)
            if not mine:
                continue
            t = self._ascend(x, xp, head, self._features(mine, skel))
            if t.ratio.lo > best.ratio.lo:
                best = t
        best.evaluations = self.evaluations
        return best

    def _skeletons(self, x, xp, codes: tuple[float, ...]) -> list[tuple[int, ...]]:
        """The skeletons samples favour most under x (all of them when there are few)."""
        n = self.samples
        sx = sample_skeletons(self.sampler.sample(list(x), n, self.seed), codes)
        sy = sample_skeletons(self.sampler.sample(list(xp), n, self.seed + 1), codes)
        reps, cx, cy = distinct_counts(sx, sy)
        if len(reps) <= SKELETONS:
            return [tuple(int(v) for v in r) for r in reps]
        score = np.log((cx + 0.5) / (cy + 0.5))
        score[cx < max(20, n // 10_000)] = -np.inf
        order = np.argsort(-score, kind="stable")[:SKELETONS]
        return [tuple(int(v) for v in reps[i]) for i in order if np.isfinite(score[i])]

    def _features(self, outputs: list[Any], skel: tuple[int, ...]) -> list[tuple[Feature, list[float]]]:
        """Numeric features of a skeleton and their candidate thresholds."""
        numeric = [k for k, c in enumerate(skel) if c == 0]
        if not numeric:
            return []
        feats: list[tuple[Feature, list[Any]]] = []
        whole = all(isinstance(f, Form) for o in outputs for f in _components(o))
        rows = _whitening(list(_components(outputs[0]))) if whole and self.program.tuple_output else None
        if rows is not None:
            for row in rows:
                forms = [_combine(row, _components(o)) for o in outputs]
                feats.append((Feature("linear", weights=row), forms))
        else:
            for k in numeric:
                feat = Feature("component", index=k) if self.program.tuple_output else IDENTITY
                feats.append((feat, [_components(o)[k] for o in outputs]))
        laws = self._laws()
        return [(feat, self._grid(forms, laws)) for feat, forms in feats]

    def _laws(self) -> dict:
        laws: dict = {}
        for spec in self.backend._specs.values():
            laws.update(spec.laws)
        return laws

    @staticmethod
    def _grid(forms: list[Any], laws: dict) -> list[float]:
        offsets = sorted({f.const if isinstance(f, Form) else f for f in forms})
        if len(offsets) > MAX_OFFSETS:
            offsets = [offsets[0], offsets[len(offsets) // 2], offsets[-1]]
        scales = [_noise_scale(f, laws) for f in forms if isinstance(f, Form)]
        s = max(scales) if scales else 1.0
        grid = {float(c) + d * s for c in offsets for d in STEPS}
        return sorted(g for g in grid if math.isfinite(g))

    def _ascend(self, x, xp, head: Event | None, feats: list[tuple[Feature, list[float]]]) -> Tuned:
        """Coordinate ascent over one threshold per numeric feature (none, >= a or < a)."""
        chosen: list[Event | None] = [None] * len(feats)

        def event() -> Event | None:
            parts = ([head] if head is not None else []) + [c for c in chosen if c is not None]
            if not parts:
                return None
            return parts[0] if len(parts) == 1 else Product(tuple(parts))

        best = self._ratio(x, xp, event())
        for _ in range(2):
            improved = False
            for k, (feat, grid) in enumerate(feats):
                keep = chosen[k]
                for below in (False, True):
                    for a in grid:
                        chosen[k] = Threshold(feat, a, below)
                        r = self._ratio(x, xp, event())
                        if r.lo > best.lo and r.lo != 0:
                            best, keep, improved = r, chosen[k], True
                        if best.lo == INF:
                            break
                chosen[k] = keep
            if not improved or best.lo == INF:
                break
        return Tuned(event(), best, self.evaluations)
