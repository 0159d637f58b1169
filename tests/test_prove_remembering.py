"""Checked proofs given again within ``remembering()``: a search on parts proves each part, then the
composition rule proves the same parts once more (cut from the whole, named otherwise)."""

import dataclasses
import importlib
from fractions import Fraction

from samplers import catalogue
from samplers.lang.slicing import part_program
from verifiers.prover import prove as prove_module
from verifiers.prover.prove import RULES, prove, remembering


def _counting(monkeypatch) -> dict[str, int]:
    calls: dict[str, int] = {}
    for name, path in RULES.items():
        rule = importlib.import_module(path)

        def attempt(program, eps, _name=name, _inner=rule.attempt):
            calls[_name] = calls.get(_name, 0) + 1
            return _inner(program, eps)

        monkeypatch.setattr(rule, "attempt", attempt)
    return calls


def _part_and_twin():
    program = catalogue.get("noisy_hist1").trace(n=3)
    part = part_program(program, [0], [0])
    return part, dataclasses.replace(part, name="noisy_hist1 output 0")


def test_a_proof_is_given_again_for_the_same_shape_within_the_block(monkeypatch):
    part, twin = _part_and_twin()
    calls = _counting(monkeypatch)
    with remembering():
        first = prove(part)
        tried = dict(calls)
        again = prove(twin)
    assert first.rule == again.rule and first.eps == again.eps and first.evidence == again.evidence
    assert again.mechanism == twin.name and first.mechanism == part.name  # each names its own program
    assert again.to_json() == dataclasses.replace(first, mechanism=twin.name).to_json()
    assert calls[first.rule] == tried[first.rule] == 1  # not proved again
    assert all(calls[r] == 2 for r in calls if r != first.rule)  # rules that found nothing are tried again
    assert prove_module._CHECKED is None  # forgotten after the block


def test_outside_the_block_every_rule_runs_each_time(monkeypatch):
    part, twin = _part_and_twin()
    calls = _counting(monkeypatch)
    prove(part)
    prove(twin)
    assert set(calls.values()) == {2}


def test_another_shape_or_eps_is_proved_afresh(monkeypatch):
    part, _ = _part_and_twin()
    other = part_program(catalogue.get("noisy_hist1").trace(n=3, eps=0.5), [0], [0])
    calls = _counting(monkeypatch)
    with remembering():
        found = prove(part)
        prove(other)
        prove(part, Fraction(found.eps) * 2)
    assert calls[found.rule] == 3
