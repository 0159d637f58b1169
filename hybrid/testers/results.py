"""Statistical results in DESIGN.md's JSON contract, with candidates for exact verifiers.

A candidate is ``(x, x', event, stat_interval)``: the search hands it to an exact
backend, which certifies (or not) the ratio of the event's probabilities.  Testers'
results are never certified: ``certified`` is false, ``ratio`` (the exact ratio) is
null, and ``eps_lower`` is a statistical lower bound holding with ``confidence``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from hybrid.testers.events import Event
from hybrid.formats import inputs_to_json, params_to_json, value_to_json


@dataclass
class Candidate:
    """A witness proposed by a tester, with the statistical interval of eps it supports."""

    mechanism: str
    params: Mapping[str, Any]
    x: Sequence[int]
    x_prime: Sequence[int]
    event: Event
    stat_interval: tuple[float, float]
    method: str
    inputs: Mapping[str, Any] = field(default_factory=dict)  # {"inputs": ...} of a plain function (formats)

    def witness(self) -> dict[str, Any]:
        return {"mechanism": self.mechanism, "params": params_to_json(self.params), "x": list(self.x),
                "x_prime": list(self.x_prime), "event": self.event.to_json(), **self.inputs}

    def to_json(self) -> dict[str, Any]:
        return {**self.witness(), "stat_interval": value_to_json(list(self.stat_interval)), "method": self.method,
                "event_description": self.event.describe()}


def sampler_identity(sampler: Any) -> tuple[str, dict[str, Any]]:
    """The mechanism name and parameters of a compiled sampler or a black box."""
    program = getattr(sampler, "program", None)
    if program is not None:
        return program.name, program.param_dict
    return getattr(sampler, "name", "blackbox"), dict(getattr(sampler, "params", {}))


def candidate_of(sampler: Any, x: Sequence[int], x_prime: Sequence[int], event: Event,
                 interval: tuple[float, float], method: str) -> Candidate:
    """A tester's witness on ``sampler``, named as :func:`sampler_identity` names it, with its inputs."""
    name, params = sampler_identity(sampler)
    return Candidate(name, params, x, x_prime, event, interval, method,
                     inputs_to_json(getattr(sampler, "program", None)))


@dataclass
class StatResult:
    """What ``dphybrid test`` and ``dphybrid estimate`` report."""

    method: str
    candidate: Candidate | None
    eps_lower: float
    confidence: float
    seed: int
    samples: int
    timings: Mapping[str, float]
    precision: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    candidates: list[Candidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        lo, hi = self.candidate.stat_interval if self.candidate else (0.0, math.inf)
        return {
            "method": self.method,
            "mechanism": self.candidate.mechanism if self.candidate else None,
            "eps_lower": self.eps_lower,
            "ratio": None,
            "witness": self.candidate.witness() if self.candidate else None,
            "certified": False,
            "backend": self.method,
            "stat_interval": value_to_json([lo, hi]),
            "eps_upper": None,
            "proved_dp": None,
            "precision": self.precision,
            "confidence": self.confidence,
            "seed": self.seed,
            "samples": self.samples,
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "candidates": [c.to_json() for c in (self.candidates or ([self.candidate] if self.candidate else []))],
            **value_to_json(self.extra),
        }
