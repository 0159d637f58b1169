"""Proof files: a saved proof (``dphybrid prove --out``) and its re-check (``dphybrid certify``).

A proof file is the proof's JSON (:meth:`verifiers.prover.proof.Proof.to_json`) under
``"kind": "dphybrid-proof"``, with the ``inputs`` (size, domain, neighbours) a plain
function was traced with.  Re-checking trusts nothing in it: the file is read against its
contract (:func:`verifiers.prover.proof_json.read_proof`: known keys only, exact finite
numbers, eps >= 0, delta in [0, 1], the evidence's shape), the mechanism is traced again
(from the catalogue, or the function's file with the file's inputs) with the file's
parameters, and the rule's independent checker re-derives the evidence against that
program, completely (the rule's ``confirm``: the alignment checker alone re-asks z3 on a
sample of the paths).  A file that claims to be a proof but breaks its contract, or names
an unknown rule or mechanism, is a :class:`ProofFileError`.

:func:`out_path` checks where a proof will be written before the work starts: a file
already there is overwritten only if it is a proof file itself.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

from hybrid.formats import inputs_to_json, json_safe, mechanism_from_json, params_to_json
from hybrid.out_files import writable
from samplers.errors import DPHybridError, ParameterError
from samplers.json_shape import NAT, check
from samplers.lang.ir import Program
from samplers.lang.mechanism import Mechanism
from samplers.plain import is_function_spec
from samplers.readers import parse_json, read_text
from verifiers.prover.proof import Proof, number_json
from verifiers.prover.proof_json import MalformedProof, read_proof
from verifiers.prover.prove import RULES

KIND = "dphybrid-proof"
INPUTS = {"size": NAT, "domain": [int], "neighbours": str}  # a plain function's, as inputs_to_json writes them


class ProofFileError(DPHybridError):
    """A proof file that cannot be read, is malformed, or names what we do not know."""


def is_proof(data: Any) -> bool:
    """Whether parsed JSON is a proof file (by its ``kind``)."""
    return isinstance(data, dict) and data.get("kind") == KIND


def document(proof: Proof, program: Program) -> dict[str, Any]:
    """The JSON object a proof file holds (``program``: the one proved, for a plain function's inputs)."""
    return {"kind": KIND, **proof.to_json(), **inputs_to_json(program)}


def out_path(path: str) -> Path:
    """Where to write a proof, checked first: its folder exists, and a file there is a proof file."""
    p = Path(path)
    if not p.name or path.endswith(os.sep):
        raise ProofFileError(f"proof path {path!r} names no file")
    return writable(p, "the proof", _ours, "a dphybrid proof file", ProofFileError)


def _ours(p: Path) -> bool:
    try:
        return is_proof(parse_json(read_text(p, error=ProofFileError), str(p), error=ProofFileError))
    except ProofFileError:
        return False


def write(path: Path, proof: Proof, program: Program) -> None:
    """Write the proof of ``program`` to its file (the path checked by :func:`out_path`)."""
    try:
        path.write_text(json.dumps(json_safe(document(proof, program)), indent=2, allow_nan=False) + "\n",
                        encoding="utf-8")
    except OSError as e:
        raise ProofFileError(f"cannot write the proof {path}: {e.strerror or e}") from None


def recheck(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Read a parsed proof file against its contract, re-trace the mechanism and re-run the rule's
    checker (its ``confirm``); :class:`ProofFileError` when the file breaks the contract."""
    body = {k: v for k, v in data.items() if k not in ("kind", "inputs")}
    try:
        proof = read_proof(body)
        if "inputs" in data:
            check(INPUTS, data["inputs"], "inputs", error=MalformedProof)
        elif is_function_spec(proof.mechanism):  # what the function computes depends on them
            raise MalformedProof(f"a proof of the function {proof.mechanism} must give its inputs "
                                 "(size, domain, neighbours)")
    except MalformedProof as e:
        raise ProofFileError(f"{source} is not a well-formed proof: {e}") from None
    mech = mechanism_from_json(proof.mechanism, data.get("inputs"), error=ProofFileError)
    params = mech.params(**proof.params)
    program = mech.trace(**params)
    problem = importlib.import_module(RULES[proof.rule]).confirm(program, proof)
    return {"kind": "proof-check", "file": source, "mechanism": mech.name, "params": params_to_json(params),
            "domain": covered(mech, params, program, proof.rule.startswith("every_n")), "rule": proof.rule,
            "eps": data["eps"],
            "eps_upper": proof.eps_upper, "delta": number_json(proof.delta), "ratio": data.get("ratio"),
            "confirmed": problem is None, "problem": problem}


def covered(mech: Mechanism, params: dict[str, Any], program: Program, every_n: bool) -> str:
    """The inputs a proof covers: the traced domain, or for an every-n proof every size from the
    smallest at which the mechanism is defined with its other parameters (smartsum: n > T)."""
    if not every_n:
        return program.domain.describe()
    dom = program.domain
    return f"every size n >= {_smallest_size(mech, params)} (elements in {dom.lo[0]}..{dom.hi[0]})"


def _smallest_size(mech: Mechanism, params: dict[str, Any]) -> int:
    if not isinstance(params.get("n"), int):
        return 1
    for k in range(1, params["n"]):
        try:
            mech.params(**{**params, "n": k})
            return k
        except ParameterError:
            continue
    return params["n"]
