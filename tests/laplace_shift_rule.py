"""A small, real and sound proof rule used by the composition tests: ``x[0] + Laplace(b)``.

A one-coordinate program whose only output is its input plus one Laplace(b) draw is the
Laplace mechanism: with neighbours at most ``s`` apart it is ``s/b``-DP (Dwork et al. 2006),
``s`` the relation's sensitivity clipped to the domain's width.  The alignment rules of
:mod:`verifiers.prover` prove far more; this one lets the composition rule's handling of
continuous parts be tested on its own.
"""

from __future__ import annotations

from fractions import Fraction

from samplers.lang.ir import Program
from samplers.lang.neighbours import AllDiffer, OneDiffer, ReplaceOne
from verifiers.prover.proof import NoProof, Proof

RULE = "laplace_shift"
RATIO = False
EVIDENCE = {"level": str}  # the evidence's shape (verifiers.prover.proof_json)


def _level(program: Program) -> Fraction | None:
    if program.arity != 1 or program.domain.size != 1:
        return None
    out = program.nodes[program.outputs[0]]
    ops = sorted(program.nodes[a].op for a in out.args)
    if out.op != "add" or ops != ["input", "laplace"]:
        return None
    scale = next(program.nodes[a].attr for a in out.args if program.nodes[a].op == "laplace")
    nb, width = program.neighbours, program.domain.hi[0] - program.domain.lo[0]
    if isinstance(nb, (OneDiffer, AllDiffer)):
        s = min(nb.sensitivity, width)
    elif isinstance(nb, ReplaceOne):
        s = width
    else:
        return None
    return Fraction(s) / Fraction(scale)


def attempt(program: Program, eps: Fraction | None = None) -> Proof | NoProof:
    level = _level(program)
    if level is None:
        return NoProof("not x[0] + Laplace(b)", rule=RULE)
    if eps is not None and level > eps:
        return NoProof(f"level {level} above the claim", rule=RULE)
    return Proof(rule=RULE, mechanism=program.name, params=dict(program.params), eps=level,
                 evidence={"level": str(level)}, solver="closed form")


def check(program: Program, proof: Proof) -> str | None:
    level = _level(program)
    if level is None or Fraction(proof.eps) < level or proof.evidence.get("level") != str(level):
        return f"not the Laplace mechanism at level {proof.eps}"
    return None


confirm = check  # the check is complete: it re-derives the level from the program
