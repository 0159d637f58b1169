"""Proof files: a saved proof (``dphybrid prove --out``) and its re-check (``dphybrid certify``).

A proof file is the proof's JSON (:meth:`verifiers.prover.proof.Proof.to_json`) under
``"kind": "dphybrid-proof"``.  Re-checking trusts nothing in it: the mechanism is traced
again from the catalogue with the file's parameters, and the rule's independent checker
re-derives the evidence against that program, completely (the rule's ``confirm``: the
alignment checker alone re-asks z3 on a sample of the paths).  A file that claims to be a proof but is
malformed, or names an unknown rule or mechanism, is a :class:`ProofFileError`.

:func:`out_path` checks where a proof will be written before the work starts: a file
already there is overwritten only if it is a proof file itself.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

from hybrid.formats import json_safe, params_to_json
from hybrid.out_files import writable
from samplers import catalogue
from samplers.errors import DPHybridError
from samplers.readers import parse_json, read_text
from verifiers.prover.proof import Proof, number_json
from verifiers.prover.prove import RULES

KIND = "dphybrid-proof"


class ProofFileError(DPHybridError):
    """A proof file that cannot be read, is malformed, or names what we do not know."""


def is_proof(data: Any) -> bool:
    """Whether parsed JSON is a proof file (by its ``kind``)."""
    return isinstance(data, dict) and data.get("kind") == KIND


def document(proof: Proof) -> dict[str, Any]:
    """The JSON object a proof file holds."""
    return {"kind": KIND, **proof.to_json()}


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


def write(path: Path, proof: Proof) -> None:
    """Write the proof file (the path checked by :func:`out_path`)."""
    try:
        path.write_text(json.dumps(json_safe(document(proof)), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    except OSError as e:
        raise ProofFileError(f"cannot write the proof {path}: {e.strerror or e}") from None


def recheck(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Re-trace the mechanism and re-run the rule's checker on a parsed proof file."""
    try:
        proof = Proof.from_json(data)
    except (KeyError, TypeError, ValueError) as e:
        raise ProofFileError(f"{source} is not a well-formed proof ({type(e).__name__}: {e})") from None
    if proof.rule not in RULES:
        raise ProofFileError(f"{source}: unknown proof rule {proof.rule!r} (known: {', '.join(RULES)})")
    mech = catalogue.get(proof.mechanism)
    params = mech.params(**proof.params)
    program = mech.trace(**params)
    problem = importlib.import_module(RULES[proof.rule]).confirm(program, proof)
    return {"kind": "proof-check", "file": source, "mechanism": mech.name, "params": params_to_json(params),
            "rule": proof.rule, "eps": data.get("eps"), "eps_upper": proof.eps_upper,
            "delta": number_json(proof.delta),
            "ratio": data.get("ratio"), "confirmed": problem is None, "problem": problem}
