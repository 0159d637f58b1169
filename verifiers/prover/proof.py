"""Proofs as data: what a rule proved, for which claim, and the evidence a checker re-runs.

A :class:`Proof` says "the program is (eps, delta)-DP for every neighbour pair of its
declared domain", with the rule that proved it and its ``evidence``: a JSON-ready dict
whose shape each rule documents (for alignments: the shift of every noise draw as a
readable expression, the privacy cost of every path and z3's answers).  ``checked`` is
True only once the rule's independent checker confirmed the evidence; only checked
proofs leave :func:`verifiers.prover.prove.prove`.  A :class:`NoProof` carries the
reason and, where there is one, the draw or path that failed.

``eps`` and ``delta`` are exact (``Fraction``) where the rule computes them exactly.
A rule whose level is ``ln`` of an exact ratio (composition of exact part levels) gives
that ratio as ``ratio`` (``e^eps``, a ``Fraction`` or ``inf``) and ``eps`` as its sound
float upper end.  :meth:`Proof.eps_upper` is a float rounded up, the sound direction for
an upper bound.  :func:`check_delta` reads a claimed delta (a number in [0, 1]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from samplers.errors import ParameterError
from samplers.lang.exact import exact, fraction_str
from samplers.numerals import short_text
from verifiers.epsilon import eps_upper as ratio_eps_upper
from verifiers.ratio import Ratio, ratio_str

Number = Fraction | float


def round_up(v: Number) -> float:
    """The smallest float >= ``v`` (``inf`` stays ``inf``)."""
    if isinstance(v, float):
        return v
    f = float(v)
    return f if Fraction(f) >= v else math.nextafter(f, math.inf)


def check_delta(v: Any, what: str = "delta") -> Fraction:
    """The exact value of a claimed delta: a number in [0, 1] (NaN, infinities and text that is
    no number refused with a :class:`ParameterError` naming ``what``)."""
    try:
        q = exact(v, what=what)
    except ParameterError as e:
        raise ParameterError(f"{what} must be a number in [0, 1] ({str(e).removeprefix(what + ': ')})") from None
    if not 0 <= q <= 1:
        raise ParameterError(f"{what} must be a number in [0, 1] (a difference of probabilities), "
                             f"got {short_text(str(v))}")
    return q


def number_json(v: Number) -> str | float:
    """An exact number for JSON: ``"p/q"`` for a Fraction, the float itself otherwise."""
    return fraction_str(v) if isinstance(v, Fraction) else v


def number_from_json(v: Any) -> Number:
    """Inverse of :func:`number_json`: ``"p/q"`` (or ``"inf"``) or a number; ValueError otherwise."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise ValueError(f"{v!r} is not a number")
    if isinstance(v, str):
        if v.strip() == "inf":
            return math.inf
        num, _, den = v.partition("/")
        return Fraction(int(num), int(den or 1))
    return Fraction(v) if isinstance(v, int) else float(v)


@dataclass(frozen=True)
class Proof:
    """``(eps, delta)``-DP proved by ``rule`` for ``mechanism`` with ``params``."""

    rule: str
    mechanism: str
    params: dict[str, Any]
    eps: Number
    evidence: dict[str, Any]
    delta: Number = Fraction(0)
    checked: bool = False
    solver: str = ""  # how the conditions were discharged, e.g. "z3 4.13: unsat (12 queries)"
    ratio: Ratio | None = None  # e^eps exactly, for rules whose level is ln of a ratio

    @property
    def eps_upper(self) -> float:
        """The proved level as a float, rounded up (through the ratio's sound log bracket)."""
        if self.ratio is not None:
            return max(ratio_eps_upper(self.ratio), round_up(self.eps))
        return round_up(self.eps)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "mechanism": self.mechanism,
            "params": {k: number_json(v) if isinstance(v, Fraction) else v for k, v in self.params.items()},
            "eps": number_json(self.eps), "eps_upper": self.eps_upper,
            "delta": number_json(self.delta), "checked": self.checked, "solver": self.solver,
            "evidence": self.evidence,
        } | ({} if self.ratio is None else {"ratio": ratio_str(self.ratio)})


@dataclass(frozen=True)
class NoProof:
    """No rule proved the claim: why, and where (a draw, a path) when the rule can say."""

    reason: str
    rule: str = ""
    where: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"proved": False, "rule": self.rule, "reason": self.reason, "where": self.where,
                "details": self.details}
