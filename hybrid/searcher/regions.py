"""The testers' events as symbolic events for the continuous backend.

A symbolic event (:mod:`verifiers.continuous.backend`) reads a path's outputs with
``run.output(k)`` (constants, ``BOTTOM`` or affine forms in the noise) and compares
them with ``run.less`` / ``run.winner``, which branch the path; it returns the path's
membership weight.  :func:`symbolic` builds one from any event the testers write
(:mod:`hybrid.testers.events`): set events, thresholds on a feature, products, and the
exported logistic attack; a list of outputs is a set event on the whole output.

Features are evaluated with the same meaning as on samples (:mod:`hybrid.testers.features`),
in exact real arithmetic: a released continuous value is never equal to a constant
(probability zero), so it is never bottom or a special code; ``max``/``min`` of the
numeric entries branch on the winner; a ``linear`` feature is an affine form.  An
exported attack's score ``b + sum_j w_j (f_j - mean_j) / scale_j`` is evaluated in
real arithmetic on the float parameters' exact values when the noise moves it (the
float64 arithmetic that defines it on samples differs by rounding only); a score the
noise does not move (a code, bottom, a decided step) is the attack's own float64 score,
so an output whose score is exactly ``t`` weighs ``q`` as on samples (DP-Sniper's
threshold sits on such atoms).  Only logistic attacks are affine, so a multi-layer
attack is refused.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from hybrid.testers.attack import Attack
from hybrid.testers.events import Event, Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature, MalformedEvent
from hybrid.testers.transforms import Transform
from samplers.errors import UnsupportedByBackend
from samplers.lang.ir import BOTTOM, BOTTOM_CODE
from verifiers.continuous.backend import SymbolicEvent
from verifiers.continuous.linear import Form, Value, add, scale
from verifiers.continuous.paths import Run

NAN = None  # a feature value that is not a number (a bottom entry, no numeric entry)


def is_bottom(v: Any) -> bool:
    """Bottom as a path gives it (``BOTTOM``) or as an event from samples may (int64 code, float NaN)."""
    if isinstance(v, (float, np.floating)):
        return math.isnan(v)
    return v is BOTTOM or (isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == BOTTOM_CODE)


def _equal(v: Any, w: Any) -> bool:
    """Exact equality of a path value and an event's value, as on samples: a random value equals
    nothing, bottom equals only bottom, and a float (NaN: bottom in float samples) only its exact value."""
    if isinstance(v, Form):
        return False
    if is_bottom(v) or is_bottom(w):
        return is_bottom(v) and is_bottom(w)
    if isinstance(w, float):
        return math.isfinite(w) and Fraction(w) == v
    return v == w


class _Outputs:
    """Lazy access to one path's output components."""

    def __init__(self, run: Run, arity: int, tuple_output: bool) -> None:
        self.run, self.arity, self.tuple_output = run, arity, tuple_output

    def __getitem__(self, k: int) -> Value:
        return self.run.output(k)

    def all(self) -> list[Value]:
        return [self.run.output(k) for k in range(self.arity)]

    def whole(self) -> Any:
        return tuple(self.all()) if self.tuple_output else self.run.output(0)


def _regular(vals: list[Value], codes: tuple) -> list[Value]:
    return [v for v in vals if not is_bottom(v) and not any(_equal(v, c) for c in codes)]


def feature_value(feature: Feature, out: _Outputs) -> Any:
    """The feature of one path's output: a constant, a form, a tuple, or NAN."""
    kind = feature.kind
    if kind == "identity":
        return out.whole()
    if not out.tuple_output:
        raise MalformedEvent(f"feature {kind} needs tuple outputs")
    if kind in ("component", "code"):
        if not 0 <= feature.index < out.arity:
            raise MalformedEvent(f"component {feature.index} of an output with {out.arity} components")
        return out[feature.index] if kind == "component" else _code(out[feature.index], feature.codes)
    vals = out.all()
    if kind == "count":
        if feature.value == "bottom":
            return sum(1 for v in vals if is_bottom(v))
        return sum(1 for v in vals if _equal(v, feature.value))
    if kind == "hamming":
        return sum(1 for v, r in zip(vals, feature.reference) if not _equal(v, r))
    if kind == "skeleton":
        return tuple(_code(v, feature.codes) for v in vals)
    if kind in ("sum", "max", "min"):
        reg = _regular(vals, feature.codes)
        if kind == "sum":
            total: Value = Fraction(0)
            for v in reg:
                total = add(total, v)
            return total
        if not reg:
            return NAN
        return reg[out.run.winner(reg) if kind == "max" else out.run.loser(reg)]
    if kind == "linear":
        if len(feature.weights) != out.arity:
            raise MalformedEvent(f"a linear feature with {len(feature.weights)} weights on {out.arity} components")
        if any(is_bottom(v) for v in vals):
            return NAN
        total = Fraction(0)
        for v, w in zip(vals, feature.weights):
            total = add(total, scale(v, Fraction(w)))
        return total
    raise MalformedEvent(f"unknown feature kind {kind!r}")


def _code(v: Value, codes: tuple) -> int:
    if is_bottom(v):
        return 1
    for j, c in enumerate(codes):
        if _equal(v, c):
            return 2 + j
    return 0


def _member(value: Any, values: Sequence[Any]) -> bool:
    for w in values:
        if isinstance(value, tuple):
            if isinstance(w, tuple) and len(w) == len(value) and all(_equal(a, b) for a, b in zip(value, w)):
                return True
        elif not isinstance(w, tuple) and _equal(value, w):
            return True
    return False


def _set_event(event: SetEvent, out: _Outputs) -> bool:
    """Membership, component by component where possible (a path that already differs stops early)."""
    if out.tuple_output and event.feature.kind in ("identity", "skeleton"):
        candidates = [w for w in event.values if isinstance(w, tuple) and len(w) == out.arity]
        for k in range(out.arity):
            v = out[k]
            here = _code(v, event.feature.codes) if event.feature.kind == "skeleton" else v
            candidates = [w for w in candidates if _equal(here, w[k])]
            if not candidates:
                return False
        return True
    return _member(feature_value(event.feature, out), event.values)


def _read_component(event: Any, tuple_output: bool) -> int | None:
    """The output component a set event or threshold reads alone (the output itself when it is not a
    tuple), or None."""
    if not isinstance(event, (SetEvent, Threshold)):
        return None
    if event.feature.kind == "component":
        return event.feature.index if tuple_output and 0 <= event.feature.index else None
    return 0 if event.feature == IDENTITY and not tuple_output else None


def _holds_on_index(event: SetEvent | Threshold) -> Any:
    """Whether the event holds when the component it reads is the integer ``i`` (an argmax's index),
    decided as the symbolic event decides a constant value."""
    if isinstance(event, SetEvent):
        return lambda i: _member(i, event.values)
    if math.isnan(event.alpha):
        raise MalformedEvent("a threshold of NaN")
    if math.isinf(event.alpha):
        return lambda i: event.below == (event.alpha > 0)
    alpha = Fraction(event.alpha)
    return (lambda i: i < alpha) if event.below else (lambda i: alpha <= i)


def _threshold(event: Threshold, out: _Outputs) -> bool:
    v = feature_value(event.feature, out)
    if v is NAN or isinstance(v, tuple) or (not isinstance(v, Form) and is_bottom(v)):
        return False
    if math.isnan(event.alpha):
        raise MalformedEvent("a threshold of NaN")
    if math.isinf(event.alpha):  # v < inf and v >= -inf hold for every number, the others never
        return event.below == (event.alpha > 0)
    alpha = Fraction(event.alpha)  # the other outcome weighs 0: keep only the region where it holds
    return out.run.require(v, alpha) if event.below else out.run.require(alpha, v, strict=False)


def _weight(event: Any, out: _Outputs) -> Any:
    if isinstance(event, Product):
        w: Any = 1
        for part in event.parts:
            w = w * _weight(part, out)
            if not w:
                return 0
        return w
    if isinstance(event, Attack):
        return _attack(event, out)
    if isinstance(event, SetEvent):
        return 1 if _set_event(event, out) else 0
    if isinstance(event, Threshold):
        return 1 if _threshold(event, out) else 0
    raise MalformedEvent(f"cannot weigh event {event!r}")


def symbolic(event: Event | list, *, arity: int, tuple_output: bool) -> SymbolicEvent:
    """A symbolic event for a program with ``arity`` output components (see the module docstring)."""
    if isinstance(event, list):
        event = SetEvent(IDENTITY, tuple(tuple(o) if isinstance(o, list) else o for o in event))
    if isinstance(event, Attack):
        _check_attack(event)
    weigh = _weigher(event, arity, tuple_output)
    first = _first_reader(event, tuple_output)
    weigh.reads_every_output = first is not None  # type: ignore[attr-defined]
    k = _read_component(event, tuple_output)
    if k is not None:  # on an argmax output the backend explores only the winners it holds on (Run.expect)
        weigh.expects = (k, _holds_on_index(event))  # type: ignore[attr-defined]
    keys = [event_key(p) for p in event.parts] if isinstance(event, Product) and len(event.parts) > 1 else [None]
    if None not in keys:  # the backend explores it part by part, from the runs kept after its first parts
        weigh.parts = tuple(part for key, p in zip(keys, event.parts)  # type: ignore[attr-defined]
                            for part in _parts(key, p, arity, tuple_output))
    rest = event.parts[1:] if isinstance(event, Product) and event.parts[0] is first else ()
    if isinstance(first, SetEvent) and (first is event or rest):
        # a set event heading the event: the runs it keeps are shared by every event it heads, and
        # the rest of the event is weighed on them (None: nothing more to weigh)
        more = _weigher(rest[0] if len(rest) == 1 else Product(tuple(rest)), arity, tuple_output) if rest else None
        weigh.head = (first, _weigher(first, arity, tuple_output), more,  # type: ignore[attr-defined]
                      _skeleton_index(first, arity, tuple_output))
    return weigh


KEPT_KEYS = 4096  # parts whose keys are kept (then they start afresh)
_keys: dict[int, tuple[Event, tuple | None]] = {}


def event_key(event: Any) -> tuple | None:
    """A hashable key of a set event, threshold or product of them: equal keys weigh every path alike
    (values keyed with their type and exact repr: ``1``, ``1.0``, ``-0.0`` and ``0.0`` differ); None
    for any other event.  A tuner builds its products from the same parts over and over: a part's key
    is kept with the part (events are immutable), so it is computed once."""
    if isinstance(event, Product):
        keys = tuple(event_key(p) for p in event.parts)
        return None if None in keys else ("all", keys)
    kept = _keys.get(id(event))
    if kept is not None and kept[0] is event:  # the part is held there: its id is not reused
        return kept[1]
    if isinstance(event, SetEvent):
        key: tuple | None = ("in", _typed(event.feature), _typed(event.values))
    elif isinstance(event, Threshold):
        key = ("threshold", _typed(event.feature), _typed(event.alpha), event.below)
    else:
        return None
    if len(_keys) >= KEPT_KEYS:
        _keys.clear()
    _keys[id(event)] = (event, key)
    return key


def _parts(key: tuple, event: Any, arity: int, tuple_output: bool) -> list[tuple[Any, SymbolicEvent]]:
    """A product's part for the backend (key, weigher), after a part that reads its output component
    alone when it reads one first (:func:`_read_component`: a set event or threshold on a component
    evaluates it before anything else, so reading it first makes the same decisions): the part's
    alternatives, weighed one after another by a tuner, then go on from the same runs."""
    part = (key, _weigher(event, arity, tuple_output))
    k = _read_component(event, tuple_output) if tuple_output and isinstance(event, Threshold) else None
    if k is None or k >= arity:
        return [part]

    def read(run: Run) -> int:
        run.output(k)
        return 1

    return [(("read", k), read), part]


def _typed(v: Any) -> Any:
    """``v`` as a key: its type and exact repr (an array by its entries: its repr may elide some)."""
    if isinstance(v, Feature):
        return ("feature", v.kind, _typed(v.index), _typed(v.value), _typed(v.reference), _typed(v.codes),
                _typed(v.weights))
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), _typed(v.tolist()))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_typed(w) for w in v))
    return type(v).__name__, repr(v)


def _skeleton_index(event: SetEvent, arity: int, tuple_output: bool) -> tuple | None:
    """For a set event on the skeleton of a tuple output whose values are tuples of plain int codes:
    ``(key, label, wanted)``, where ``label(run)`` is the run's skeleton and the event holds exactly
    when it is in ``wanted`` (what :func:`_set_event` decides component by component); runs can then
    be grouped by skeleton once, whatever the event.  None for any other set event."""
    if not tuple_output or event.feature.kind != "skeleton":
        return None
    codes = event.feature.codes
    if not all(isinstance(w, tuple) and all(isinstance(c, int) and not isinstance(c, bool) for c in w)
               for w in event.values):
        return None

    def label(run: Run) -> tuple[int, ...]:
        return tuple(_code(run.output(k), codes) for k in range(arity))

    return ("skeleton", codes), label, frozenset(w for w in event.values if len(w) == arity)


def _weigher(event: Any, arity: int, tuple_output: bool) -> SymbolicEvent:
    def weigh(run: Run) -> Any:
        return _weight(event, _Outputs(run, arity, tuple_output))

    return weigh


def _first_reader(event: Any, tuple_output: bool) -> Event | None:
    """The part of ``event`` that, weighed first, evaluates every output component in order before
    any other comparison (the continuous backend then weighs the event on each input's finished
    runs), or None: a set event on the whole output or its skeleton (it reads the components in
    order, and a path it rejects weighs 0 wherever it stopped), a threshold on a single output, or
    the first part of a product that starts with one."""
    if isinstance(event, Product):
        return _first_reader(event.parts[0], tuple_output) if event.parts else None
    if isinstance(event, SetEvent):
        whole = ("identity", "skeleton") if tuple_output else ("identity",)
        return event if event.feature.kind in whole else None
    if isinstance(event, Threshold):
        return event if not tuple_output and event.feature.kind == "identity" else None
    return None


# -- exported attacks ---------------------------------------------------------------------

def _check_attack(attack: Attack) -> None:
    if attack.model.kind != "logistic" or len(attack.model.weights) != 1:
        raise UnsupportedByBackend("only a logistic attack's score is affine in the output; the continuous "
                                   f"backend cannot weigh a {attack.model.kind} attack")
    if attack.transform.fn is not None:
        raise UnsupportedByBackend("the attack uses a custom feature transform, which cannot be evaluated symbolically")


def _columns(transform: Transform, vals: list[Value], run: Run) -> list[Value]:
    """The transform's features of one path's output (as :func:`hybrid.testers.kernels.column_features`)."""
    if transform.joint:
        concrete = all(not isinstance(v, Form) for v in vals)
        key = tuple(vals) if len(vals) > 1 else vals[0]
        feats = [Fraction(1 if concrete and _member(key, [o]) else 0) for o in transform.joint]
        return feats
    out: list[Value] = []
    for col, v in zip(transform.columns, vals):
        bottom = is_bottom(v)
        if col.kind == "onehot":
            out += [Fraction(1 if _equal(v, w) else 0) for w in col.values]
            continue
        special = any(_equal(v, c) for c in col.values)
        out.append(Fraction(0) if bottom or special else v)
        if col.cut is not None:
            above = not bottom and not special and run.less(Fraction(col.cut), v)
            out.append(Fraction(1 if above else 0))
        out += [Fraction(1 if _equal(v, c) else 0) for c in col.values]
        if col.bottom:
            out.append(Fraction(1 if bottom else 0))
    return out


def _attack(attack: Attack, out: _Outputs) -> Any:
    vals = out.all() if out.tuple_output else [out.whole()]
    feats = _columns(attack.transform, vals, out.run)
    m = attack.model
    score: Value = Fraction(float(m.biases[0][0]))
    for f, mean, sc, w in zip(feats, m.mean, m.scale, m.weights[0][:, 0]):
        score = add(score, scale(add(f, -Fraction(float(mean))), Fraction(float(w)) / Fraction(float(sc))))
    t = Fraction(attack.t)
    if isinstance(score, Form):
        return 1 if out.run.require(t, score) else 0
    if all(w == 0 for f, w in zip(feats, m.weights[0][:, 0]) if isinstance(f, Form)):
        # no noise in the score: the attack's own float64 arithmetic decides (a weight-0 value adds 0)
        row = np.array([[0.0 if isinstance(f, Form) else float(f) for f in feats]])
        s = float(m.scores(row)[0])
        return 1 if s > attack.t else Fraction(attack.q) if s == attack.t else 0
    return 1 if score > t else Fraction(attack.q) if score == t else 0  # noise terms cancel in reals


__all__ = ["event_key", "feature_value", "is_bottom", "symbolic"]
