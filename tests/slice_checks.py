"""Checks shared by the slice tests: a lifted witness re-weighed on the whole program."""

from __future__ import annotations

from fractions import Fraction

from hybrid.searcher.regions import symbolic
from hybrid.testers.event_json import event_from_json
from verifiers.continuous.backend import ContinuousBackend


def whole_ratio(prog, witness):
    """The lifted witness's ratio enclosed on the whole program (no slice involved: the backend
    evaluates no output the event does not read)."""
    event = symbolic(event_from_json(witness["event"]), arity=prog.arity, tuple_output=prog.tuple_output)
    return ContinuousBackend(prog).witness_ratio(witness["x"], witness["x_prime"], event).ratio


def overlap(a, b) -> bool:
    """Whether the enclosure ``a`` meets the interval ``b`` (a pair of ratio strings)."""
    return a.lo <= Fraction(b[1]) and Fraction(b[0]) <= a.hi
