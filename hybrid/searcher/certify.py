"""Certify counterexamples found by testing: exact ratios of given witnesses.

Accepted inputs (a JSON file or the parsed object):

- a dphybrid witness ``{"mechanism", "params", "x", "x_prime", "event", "claimed_eps"?}``,
  a list of them, or any dphybrid result carrying a ``"witness"`` (search, verify, test,
  estimate); the event is a list of outputs or any event the testers write (thresholds,
  projections, products);
- StatDP's result list ``[[epsilon, p, d1, d2, kwargs, event], ...]`` (the mechanism named
  separately, since StatDP's results do not name it): each event component is a value
  (categorical output) or an interval ``[-inf, a]`` meaning ``-inf < o < a``;
- the randomised threshold attack exported by ``hybrid.testers.sniper`` as an event (the fitted
  model, its scaler and feature transform, threshold ``t`` and tie probability ``q``),
  whose probability ``P(S) = P(score > t) + q P(score = t)`` is computed exactly over the
  discrete output space (``q`` at its exact binary value; scores are the attack's own
  float64 arithmetic, which defines the attack).

Each witness is checked against the mechanism's domain and neighbour relation, then its
exact ratio ``P(M(x) in E) / P(M(x') in E)`` is computed by an exact backend; a claimed
violation of eps-DP holds when the ratio exceeds the upper end of the bracket of e^eps.
For a mechanism with continuous noise the continuous backend encloses both
probabilities rigorously (:mod:`hybrid.searcher.regions` makes the event symbolic); the
certified ratio is ``lo(P(E|x)) / hi(P(E|x'))`` and the violation holds when that
exceeds the upper end of the bracket.

A certificate's JSON says ``eps_lower`` (``ln ratio`` rounded down: eps is at least this)
and ``ln_ratio_upper`` (``ln ratio`` rounded up: how tight that bound is).  It never says
``eps_upper``, which the result contract reserves for a complete global sweep: one
event's ratio bounds nothing from above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from hybrid.testers.attack import Attack
from hybrid.testers.event_json import event_from_json
from hybrid.testers.events import Event, Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from hybrid.formats import (eps_value, mechanism_from_json, output_from_json, output_to_json, params_to_json,
                            value_to_json)
from samplers.errors import DPHybridError, ParameterError
from samplers.lang.exact import fraction_str
from samplers.lang.ir import to_code
from samplers.lang.mechanism import Mechanism
from samplers.readers import read_json, short_repr
from verifiers.backends import get_backend
from verifiers.epsilon import eps_lower, eps_upper, exceeds_exp
from verifiers.ratio import INF, ratio, ratio_str


Weigh = Callable[[list[Any]], list[Fraction]]  # an event's weight S(o) for each output


class WitnessFileError(DPHybridError):
    """A witness file is unreadable, malformed or inconsistent."""


@dataclass
class Witness:
    """A claimed counterexample: the pair, the event (a set of outputs or a weighing) and the claim."""

    mechanism: Mechanism
    params: dict[str, Any]
    x: tuple[int, ...]
    x_prime: tuple[int, ...]
    event: list[Any] | Event  # a set of outputs, or a testers' event (an exported attack included)
    event_json: Any
    claimed_eps: float | Fraction | None = None
    source: str = "dphybrid"
    extra: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.claimed_eps is None:
            return
        try:
            self.claimed_eps = eps_value(self.claimed_eps, "the claimed eps")
        except ParameterError as e:
            raise WitnessFileError(str(e)) from None


def _holds(r: Any, eps: float | None) -> bool | None:
    """Whether a certified ratio ``r`` surely violates eps-DP (None without a claim)."""
    if eps is None:
        return None
    return exceeds_exp(r, eps)


def _verdict_json(w: Witness, backend: str) -> dict[str, Any]:
    return {"mechanism": w.mechanism.name, "params": params_to_json(w.params), "source": w.source,
            "witness": {"mechanism": w.mechanism.name, "params": params_to_json(w.params),
                        "x": list(w.x), "x_prime": list(w.x_prime), "event": w.event_json,
                        **({"inputs": w.mechanism.inputs_json()} if hasattr(w.mechanism, "inputs_json") else {})},
            "claimed_eps": value_to_json(w.claimed_eps), "certified": True, "backend": backend}


@dataclass
class Certificate:
    """The exact verdict on one witness."""

    witness: Witness
    p_x: Fraction
    p_x_prime: Fraction
    backend: str

    @property
    def ratio(self) -> Any:
        return ratio(self.p_x, self.p_x_prime)

    @property
    def violation_holds(self) -> bool | None:
        """Whether the claimed violation of eps-DP is certain (None without a claim)."""
        return _holds(self.ratio, self.witness.claimed_eps)

    def to_json(self) -> dict[str, Any]:
        r = self.ratio
        lo = eps_lower(r) if r else 0.0
        return {
            **_verdict_json(self.witness, self.backend),
            "p_x": fraction_str(self.p_x), "p_x_prime": fraction_str(self.p_x_prime),
            "ratio": ratio_str(r), "eps_lower": "inf" if lo == INF else lo,
            "ln_ratio_upper": "inf" if r == INF else (eps_upper(r) if r else 0.0),
            "violation_holds": self.violation_holds, **(self.witness.extra or {}),
        }


@dataclass
class EnclosedCertificate:
    """The rigorous verdict on a witness of a continuous mechanism: both probabilities enclosed."""

    witness: Witness
    result: Any  # verifiers.continuous.WitnessRatio
    backend: str

    @property
    def ratio(self) -> Any:
        """The certified ratio: the lower end of the enclosure."""
        return self.result.ratio.lo

    @property
    def violation_holds(self) -> bool | None:
        return _holds(self.ratio, self.witness.claimed_eps)

    def to_json(self) -> dict[str, Any]:
        from verifiers.continuous.backend import eps_bracket

        r = self.result
        lo, hi = eps_bracket(r.ratio)
        return {
            **_verdict_json(self.witness, self.backend),
            "p_x": r.p.to_json(), "p_x_prime": r.q.to_json(), "ratio": ratio_str(r.ratio.lo),
            "ratio_enclosure": r.ratio.to_json(), "eps_lower": value_to_json(lo), "ln_ratio_upper": value_to_json(hi),
            "level": r.level, "refined": r.decided,
            "violation_holds": self.violation_holds, **(self.witness.extra or {}),
        }


def _coordinate(a: Any) -> int:
    """An integer input coordinate (an integral float such as ``1.0`` is that integer)."""
    if isinstance(a, int) and not isinstance(a, bool):
        return a
    if isinstance(a, float) and math.isfinite(a) and a.is_integer():
        return int(a)
    raise ValueError(a)


def _point(v: Any, what: str) -> tuple[int, ...]:
    try:
        if not isinstance(v, list) or not v:
            raise ValueError(v)
        return tuple(_coordinate(a) for a in v)
    except ValueError:
        raise WitnessFileError(f"{what} must be a nonempty list of integers, got {short_repr(v)}") from None


def _weigher(event: Event) -> Weigh:
    """``S(o)`` for each output of a discrete mechanism: 1 or 0, or ``q`` at an attack's ties."""
    if isinstance(event, Attack):
        q = Fraction(event.q)

        def weigh(outputs: list[Any]) -> list[Fraction]:
            codes = [to_code(o) for o in outputs]  # as in sampler arrays: bottom is its int64 code
            batch = np.asarray([list(c) if isinstance(c, tuple) else c for c in codes], dtype=np.int64)
            s = event.scores(batch) if len(outputs) else []
            return [Fraction(1) if v > event.t else (q if v == event.t else Fraction(0)) for v in s]

        return weigh
    return lambda outputs: [Fraction(1) if event.member(o) else Fraction(0) for o in outputs]


def _event(raw: Any) -> list[Any] | Event:
    """An event in JSON: a list of outputs (kept as a set event), or a testers' event object."""
    if isinstance(raw, list):
        try:
            return list(dict.fromkeys(output_from_json(o) for o in raw))
        except DPHybridError as e:
            raise WitnessFileError(f"event: {e}") from None
    if not isinstance(raw, dict):
        raise WitnessFileError(f"event must be a list of outputs or an event object, got {short_repr(raw)}")
    try:
        return event_from_json(raw)
    except DPHybridError as e:
        raise WitnessFileError(f"event: {e}") from None


def _own_witness(d: Mapping[str, Any], claimed: float | None) -> Witness:
    for key in ("mechanism", "x", "x_prime", "event"):
        if key not in d:
            raise WitnessFileError(f"witness lacks {key!r}")
    mech = mechanism_from_json(d["mechanism"], d.get("inputs"), error=WitnessFileError)
    params = d.get("params", {})
    if not isinstance(params, dict):
        raise WitnessFileError("witness params must be an object")
    claim = claimed if claimed is not None else d.get("claimed_eps")
    return Witness(mech, mech.params(**params), _point(d["x"], "x"), _point(d["x_prime"], "x_prime"),
                   _event(d["event"]), d["event"], claim)


def _statdp_bound(v: Any) -> float:
    """An end of a StatDP interval: a number, or ``"inf"`` / ``"-inf"`` (JSON has no infinities)."""
    if isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf", "infinity", "-infinity"):
        return -math.inf if v.strip().startswith("-") else math.inf
    if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
        return float(v)
    raise WitnessFileError(f"StatDP interval end {short_repr(v)} is not a number")


def _statdp_component(c: Any, feature: Feature) -> Event:
    if isinstance(c, list) and len(c) == 2:
        lo, hi = _statdp_bound(c[0]), _statdp_bound(c[1])
        if lo != -math.inf:
            raise WitnessFileError(f"StatDP intervals are (-inf, a), got {short_repr(c)}")
        return Threshold(feature, hi, below=True)  # StatDP's numeric events are open intervals (-inf, a)
    if isinstance(c, (int, float)) and not isinstance(c, bool) and not math.isnan(c):
        return SetEvent(feature, (c,))
    raise WitnessFileError(f"StatDP event component {short_repr(c)} is neither a value nor an interval [lo, hi]")


def _statdp_witness(row: Any, mech: Mechanism, claimed: float | None) -> Witness:
    if not isinstance(row, list) or len(row) != 6:
        raise WitnessFileError(f"a StatDP result is [epsilon, p, d1, d2, kwargs, event], got {short_repr(row)}")
    eps, p, d1, d2, kwargs, event = row
    if not isinstance(kwargs, dict):
        raise WitnessFileError("StatDP kwargs must be an object")
    params = {}
    for k, v in kwargs.items():
        key = {"epsilon": "eps", "N": "c"}.get(k, k)
        if key in mech.defaults:
            params[key] = v
        elif k != "epsilon":
            raise WitnessFileError(f"StatDP kwargs name {k!r}, which {mech.name} does not have")
    params = mech.params(**params)
    program = mech.trace(**params)
    comps = event if isinstance(event, list) else [event]
    if len(comps) != program.arity:
        raise WitnessFileError(f"the StatDP event has {len(comps)} components, {mech.name}'s output {program.arity}")
    if program.tuple_output:
        parts = tuple(_statdp_component(c, Feature("component", index=k)) for k, c in enumerate(comps))
        ev: Event = Product(parts)
    else:
        ev = _statdp_component(comps[0], IDENTITY)
    return Witness(mech, params, _point(d1, "d1"), _point(d2, "d2"), ev, event,
                   eps if claimed is None else claimed, "statdp", {"statdp_p_value": p})


def parse_witnesses(data: Any, *, mechanism: str | None = None, claimed_eps: float | None = None) -> list[Witness]:
    """The witnesses in a parsed file (see the module docstring for the formats).

    ``mechanism`` names the mechanism of a StatDP result list; given with witnesses that
    name their own, it must be theirs (a mismatch is an error, never silently ignored).
    """
    if mechanism is not None and not (isinstance(data, list) and data and all(isinstance(r, list) for r in data)):
        wanted = mechanism_from_json(mechanism, error=WitnessFileError)
        found = parse_witnesses(data, claimed_eps=claimed_eps)
        other = next((w.mechanism.name for w in found if w.mechanism is not wanted), None)
        if other is not None:
            raise WitnessFileError(f"the file's witness is for {other}, not {wanted.name} (--mechanism is for "
                                   "StatDP result lists, which do not name theirs)")
        return found
    if isinstance(data, dict) and "witness" in data and isinstance(data["witness"], dict):
        claim = claimed_eps if claimed_eps is not None else data.get("claimed_eps")
        return [_own_witness(data["witness"], claim)]
    if isinstance(data, dict):
        return [_own_witness(data, claimed_eps)]
    if isinstance(data, list) and data and all(isinstance(r, list) for r in data):
        if mechanism is None:
            raise WitnessFileError("a StatDP result list does not name its mechanism: pass --mechanism")
        mech = mechanism_from_json(mechanism, error=WitnessFileError)
        return [_statdp_witness(r, mech, claimed_eps) for r in data]
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        return [w for r in data for w in parse_witnesses(r, claimed_eps=claimed_eps)]
    raise WitnessFileError("not a witness, a list of witnesses, a dphybrid result or a StatDP result list")


def load_witnesses(path: str | Path, **kw: Any) -> list[Witness]:
    """Read and parse a witness file."""
    return parse_witnesses(read_json(path, error=WitnessFileError), **kw)


def certify(witness: Witness, backend: str = "auto") -> Certificate | EnclosedCertificate:
    """The exact probabilities of the witness's event under x and x' (enclosed, for continuous noise)."""
    program = witness.mechanism.trace(**witness.params)
    exact = get_backend(program, backend)
    x, xp = exact.check_pair(witness.x, witness.x_prime)
    if exact.name == "continuous":
        from hybrid.searcher.regions import symbolic

        event = symbolic(witness.event, arity=program.arity, tuple_output=program.tuple_output)
        return EnclosedCertificate(witness, exact.witness_ratio(x, xp, event), exact.name)
    if isinstance(witness.event, list):  # a set event: the backend counts it without listing outputs
        _check_outputs(program, witness.event)
        return Certificate(witness, exact.event_probability(x, witness.event),
                           exact.event_probability(xp, witness.event), exact.name)
    px, pxp = exact.distribution(x), exact.distribution(xp)
    support = sorted(set(px) | set(pxp), key=lambda o: o if isinstance(o, tuple) else (o,))
    try:  # the event came from a file: it may not fit this mechanism's outputs
        weight = dict(zip(support, _weigher(witness.event)(support)))
    except (IndexError, ValueError, OverflowError, TypeError) as e:
        raise WitnessFileError(f"the event {short_repr(witness.event_json)} cannot be evaluated on the outputs "
                               f"of {program.name}: {e}") from None
    return Certificate(witness, sum((p * weight[o] for o, p in px.items()), Fraction(0)),
                       sum((p * weight[o] for o, p in pxp.items()), Fraction(0)), exact.name)


def _check_outputs(program: Any, outputs: list[Any]) -> None:
    """Every output of a set event has the program's shape (an int, or a tuple of its arity)."""
    arity = len(program.outputs) if program.tuple_output else None
    for o in outputs:
        if (len(o) if isinstance(o, tuple) else None) != arity:
            shape = f"a list of {arity} values" if arity else "a single value"
            raise WitnessFileError(f"event output {short_repr(output_to_json(o))} does not fit {program.name}, "
                                   f"whose outputs are {shape}")


def certify_file(path: str | Path, *, backend: str = "auto", **kw: Any) -> list[Certificate | EnclosedCertificate]:
    """Certify every witness in a file."""
    return [certify(w, backend) for w in load_witnesses(path, **kw)]

