"""Good events for mechanisms that release continuous values, built on their exact structure.

For a pair ``(x, x')`` the symbolic paths (:mod:`verifiers.continuous.paths`) say what each output
component is: a constant (a code such as SVT's -1000.0, or bottom) or an affine form in
the noise.  The *skeleton* of an output marks each component as numeric (0), bottom (1)
or code j (2 + j): a finite part, whose most discriminating values are chosen from
samples of both inputs, then improved by edits on its own certified ratio (samples miss
the rare telling skeletons).  On the numeric components of a skeleton, the event adds
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
from typing import Any, Callable, Sequence

import numpy as np

from hybrid.searcher.regions import event_key, is_bottom, symbolic
from hybrid.testers.events import Event, Product, SetEvent, Threshold, distinct_counts
from hybrid.testers.features import IDENTITY, Feature
from samplers.deadline import TimeLimitReached
from samplers.lang.ir import BOTTOM, INT, Program
from verifiers.continuous.backend import ContinuousBackend
from verifiers.continuous.enclosure import Enclosure, RatioEnclosure
from verifiers.continuous.linear import Form, add, scale
from verifiers.continuous.paths import Specialised
from verifiers.ratio import INF

STEPS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0)  # threshold offsets, in noise scales
MAX_OFFSETS = 4  # distinct component offsets a threshold grid is built around
SKELETONS = 3  # skeletons tuned per pair: the best by samples and the best by exact ratio
SCREENED = 16  # skeletons favoured by samples whose exact ratio is computed
CLIMB_STEPS = 12  # certified ratios per output component spent editing the best screened skeleton (per pair)
SECOND_SWEEP = 4  # a second ascent sweep when there are at most this many numeric features
MAX_INT_CODES = 64  # an integer output with a wider range is not a code
KEPT_PROBABILITIES = 1 << 16  # event probabilities kept per tuner (then it starts afresh)


@dataclass
class Tuned:
    """An event and its certified ratio enclosure on one pair (at the coarse level)."""

    event: Event | None  # None: the whole output space
    ratio: RatioEnclosure
    evaluations: int  # certified ratios computed by the tuner so far (all pairs)
    spent: bool = False  # tuning used its whole step budget on this pair
    stopped: str = ""  # the time limit stopped tuning (its message); the event is the best until then
    met: bool = False  # the ratio met the caller's goal (a proved upper bound): tuning stopped there


class _StepsSpent(Exception):
    """The pair's step budget is used up (raised by the next ratio it would compute)."""


class _GoalMet(Exception):
    """The best event's certified ratio meets the goal: tuning further cannot pay."""


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
            if not is_bottom(n.attr):
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
        self._last = 0  # evaluations allowed for the pair being tuned end here
        self._best = Tuned(None, RatioEnclosure(Fraction(1), Fraction(1)), 0)
        self._goal: Callable[[Fraction], bool] = lambda ratio: False
        # (input, event key) -> the event's probability enclosed: an event weighed again (a coordinate
        # ascent retries its current event, a pair's swap tries the same ones) is not explored again
        self._probabilities: dict[tuple, Enclosure] = {}

    # -- structure of a pair -------------------------------------------------------------
    def _ratio(self, x, xp, event: Event | None) -> RatioEnclosure:
        if self.evaluations >= self._last:
            raise _StepsSpent
        self.evaluations += 1
        key = ("whole output",) if event is None else event_key(event)
        sym: list[Any] = []  # built once, when an input's probability is not kept yet

        def probability(z: Sequence[int]) -> Enclosure:
            at = (tuple(z), key)
            if key is None or at not in self._probabilities:
                if not sym:
                    sym.append(symbolic(event, arity=self.program.arity, tuple_output=self.program.tuple_output)
                               if event is not None else (lambda run: 1))
                if len(self._probabilities) >= KEPT_PROBABILITIES:
                    self._probabilities.clear()
                self._probabilities[at] = self.backend.event_probability(z, sym[0])
            return self._probabilities[at]

        return RatioEnclosure.of(probability(x), probability(xp))

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

    def tune(self, x: Sequence[int], xp: Sequence[int], steps: int,
             goal: Callable[[Fraction], bool] | None = None) -> Tuned:
        """The best event found for the pair with at most ``steps`` certified ratios computed, and its
        coarse certified ratio.  Tuning stops early when ``goal`` says a certified ratio's lower end
        is enough (a proved upper bound met: marked ``met``), and when a time limit
        (:mod:`samplers.deadline`) passes: the best event until then, marked ``stopped``."""
        self._last = self.evaluations + steps
        self._best = Tuned(None, RatioEnclosure(Fraction(1), Fraction(1)), 0)
        self._goal = goal or (lambda ratio: False)
        try:
            self._tune(x, xp)
        except _StepsSpent:
            self._best.spent = True
        except _GoalMet:
            self._best.met = True
        except TimeLimitReached as e:
            self._best.stopped = str(e)
        self._best.evaluations = self.evaluations
        return self._best

    def _offer(self, event: Event | None, ratio: RatioEnclosure) -> None:
        if ratio.lo > self._best.ratio.lo:
            self._best = Tuned(event, ratio, self.evaluations)
            if self._goal(ratio.lo):
                raise _GoalMet

    def _tune(self, x: Sequence[int], xp: Sequence[int]) -> None:
        codes = tuple(sorted(set(output_constants(self.backend.specialised(x)))
                             | set(output_constants(self.backend.specialised(xp)))))
        for skel in self._skeletons(x, xp, codes):
            head = self._head(skel, codes)
            mine = self._outputs(x, head) + self._outputs(xp, head)
            if not mine:
                continue
            slots = self._slots(mine, skel, codes)
            numeric = [o for o in slots if o[0] is None]
            for layout in ([[head]] + numeric if head is not None else None, slots):
                if layout is not None:
                    self._ascend(x, xp, layout)

    def _skeletons(self, x, xp, codes: tuple[float, ...]) -> list[tuple[int, ...]]:
        """The skeletons to tune: those samples favour most under x, and among the favoured ones those
        with the best certified ratio on their own (thresholds may change the order)."""
        n = self.samples
        sx = sample_skeletons(self.sampler.sample(list(x), n, self.seed), codes)
        sy = sample_skeletons(self.sampler.sample(list(xp), n, self.seed + 1), codes)
        reps, cx, cy = distinct_counts(sx, sy)
        found = [tuple(int(v) for v in r) for r in reps]
        if len(found) <= SKELETONS:
            return found
        score = np.log((cx + 0.5) / (cy + 0.5))
        score[cx < max(20, n // 10_000)] = -np.inf
        order = [found[i] for i in np.argsort(-score, kind="stable")[:SCREENED] if np.isfinite(score[i])]
        exact = {k: self._ratio(x, xp, self._head(k, codes)).lo for k in order}
        ranked = sorted(exact, key=lambda k: -exact[k])
        climbed = self._climb(x, xp, codes, ranked[0], exact[ranked[0]]) if ranked else []
        return list(dict.fromkeys(climbed + order[:SKELETONS] + ranked[:SKELETONS]))

    def _climb(self, x, xp, codes: tuple[float, ...], skel: tuple[int, ...], ratio: Fraction) -> list[tuple[int, ...]]:
        """The best screened skeleton improved by edits (``[]`` when none pays; see :func:`_edits`).

        Samples only show skeletons likely under x; the most telling ones can be rare (a sparse
        vector answering its c queries after a long run below the threshold, where x and x' differ
        in the direction the threshold cannot absorb).  First-improvement hill climbing on the
        skeleton's own certified ratio, retrying the last paying edit first, finds them in about one
        ratio per step.  Where no edit pays but some tie (exchangeable positions: moving an answer
        within a run of equal inputs), the climb walks on from the last tie tried, never back
        to a skeleton seen.  It spends at most ``CLIMB_STEPS`` ratios per output
        component."""
        if not self.program.tuple_output or not any(skel) or all(c == 1 for c in skel):
            return []
        start, best, last, budget = self.evaluations, skel, None, CLIMB_STEPS * len(skel)
        seen = {skel}
        while ratio != INF:
            tie = None
            for e in ([last] if last is not None else []) + _edits(best):
                cand = _edit(best, *e)
                if cand in seen:
                    continue
                if self.evaluations - start >= budget:
                    return [best] if best != skel else []
                seen.add(cand)
                r = self._ratio(x, xp, self._head(cand, codes)).lo
                if r > ratio:
                    best, ratio, last = cand, r, e
                    break
                if r == ratio and r > 0:
                    tie = cand
            else:
                if tie is None:
                    break
                best, last = tie, None  # a plateau (exchangeable positions): walk on
        return [best] if best != skel else []

    def _slots(self, outputs: list[Any], skel: tuple[int, ...], codes: tuple[float, ...]) -> list[list]:
        """The event's slots, one per output component (or whitened coordinate): each a list of
        options, the first one chosen at the start: a code component's value (or free; bottom
        entries stay free, a halted sparse vector's are implied), a numeric one's thresholds.

        Two layouts are tuned per skeleton: the whole skeleton fixed plus the numeric slots
        (a threshold then applies to released values only), and these relaxable slots (a
        threshold ``v < a`` then also admits a code below ``a``)."""
        tuple_output = self.program.tuple_output
        laws = self._laws()
        whole = not any(skel) and all(isinstance(f, Form) for o in outputs for f in _components(o))
        rows = _whitening(list(_components(outputs[0]))) if whole and tuple_output else None
        if rows is not None:
            return [[None] + _thresholds(Feature("linear", weights=row),
                                         self._grid([_combine(row, _components(o)) for o in outputs], laws))
                    for row in rows]
        slots = []
        for k, code in enumerate(skel):
            feat = Feature("component", index=k) if tuple_output else IDENTITY
            if code == 0:
                slots.append([None] + _thresholds(feat, self._grid([_components(o)[k] for o in outputs], laws)))
            elif code >= 2 or not tuple_output:
                value = codes[code - 2] if code >= 2 else BOTTOM
                slots.append([SetEvent(feat, (value,))] + ([None] if tuple_output else []))
        return slots

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
        grid |= {float((a + b) / 2) for a, b in zip(offsets, offsets[1:])}  # between offsets: tiny noise
        return sorted(g for g in grid if math.isfinite(g))

    def _ascend(self, x, xp, slots: list[list]) -> None:
        """Coordinate ascent over the slots' options (see :meth:`_slots`), each improvement offered
        as the pair's best event.

        A slot whose options equal an earlier one's (the same offsets and noise: parallel
        releases of one query) first tries the option that slot chose, and scans the rest
        only if it does not pay; a second sweep runs when there are few slots.
        """
        chosen: list[Event | None] = [options[0] for options in slots]

        def event() -> Event | None:
            parts = [c for c in chosen if c is not None]
            if not parts:
                return None
            return parts[0] if len(parts) == 1 else Product(tuple(parts))

        best = self._ratio(x, xp, event())
        self._offer(event(), best)
        by_options: dict[tuple, int] = {}
        for sweep in range(2 if len(slots) <= SECOND_SWEEP else 1):
            improved = False
            for k, options in enumerate(slots):
                if best.lo == INF:
                    return
                sig = tuple(_signature(o) for o in options)
                known = by_options.get(sig)
                order = ([known] if known is not None and sweep == 0 else []) + list(range(len(options)))
                keep = chosen[k]
                for n, j in enumerate(order):
                    if options[j] is keep and n > 0:
                        continue
                    chosen[k] = options[j]
                    r = self._ratio(x, xp, event())
                    if r.lo > best.lo and r.lo != 0:
                        best, keep, improved = r, options[j], True
                        self._offer(event(), best)
                        by_options[sig] = j
                        if known is not None and n == 0:
                            break  # the earlier slot's choice pays here too
                    if best.lo == INF:
                        break
                chosen[k] = keep
            if not improved:
                break


def _edits(skel: tuple[int, ...]) -> list[tuple[str, int, int]]:
    """The edits tried on a skeleton, each keeping its length: move a component that is neither bottom
    nor the most common value elsewhere (a sparse vector's answer among its refusals), insert a value
    the skeleton holds (the last component drops), delete a component (the last one repeats)."""
    held = sorted(set(skel) - {1})
    common = max(held, key=skel.count)
    n = len(skel)
    moves = [("move", i, j) for i in range(n) if skel[i] not in (1, common) for j in range(n) if j != i]
    return moves + [("insert", i, v) for i in range(n) for v in held] + [("delete", i, 0) for i in range(n)]


def _edit(skel: tuple[int, ...], kind: str, i: int, arg: int) -> tuple[int, ...]:
    """The skeleton after one edit of :func:`_edits`."""
    if kind == "move":
        rest = skel[:i] + skel[i + 1:]
        return rest[:arg] + skel[i:i + 1] + rest[arg:]
    if kind == "insert":
        return skel[:i] + (arg,) + skel[i:-1]
    return skel[:i] + skel[i + 1:] + skel[-1:]


def _thresholds(feat: Feature, grid: list[float]) -> list[Event]:
    return [Threshold(feat, a, below) for below in (False, True) for a in grid]


def _signature(e: Event | None) -> Any:
    """An event option without its feature (slots of parallel releases have equal signatures)."""
    if isinstance(e, Threshold):
        return ("t", e.alpha, e.below)
    if isinstance(e, SetEvent):
        return ("in", e.values)
    return None
