"""An every-n proof's evidence states the neighbour relation, the elements' range and the unit
difference it was proved for; its checker re-derives them from the mechanism, so a proof file
that states others (a tampered or mislabelled file) must be rejected, not confirmed while it
says something the check never looked at (found in a soundness audit: both were confirmed)."""

from __future__ import annotations

import dataclasses

import pytest

from samplers import catalogue
from verifiers.prover import every_n, every_n_reduce
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

TAMPERED = {"neighbours": "one_differ", "element": [0, 1], "unit": 2}


@pytest.mark.parametrize("name, rule", [("svt1", every_n), ("report_noisy_max1", every_n_reduce)], ids=["every_n", "every_n_reduce"])
def test_a_proof_stating_another_relation_or_range_is_rejected(name, rule):
    program = catalogue.get(name).trace()
    proof = prove(program, None, every_n=True)
    assert isinstance(proof, Proof) and proof.rule == rule.RULE
    assert rule.check(program, proof) is None
    for key, value in TAMPERED.items():
        forged = dataclasses.replace(proof, evidence={**proof.evidence, key: value})
        problem = rule.check(program, forged)
        assert problem is not None and "the proof describes" in problem, key
