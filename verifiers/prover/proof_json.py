"""Reading a proof back from JSON (a proof file, a part's proof inside one): the one place its
contract is checked, before any checker sees it.

A proof object (:meth:`verifiers.prover.proof.Proof.to_json`) has exactly the keys
``rule``, ``mechanism``, ``params``, ``eps``, ``eps_upper``, ``delta``, ``checked``,
``solver`` and ``evidence`` (and ``ratio`` for a rule whose proofs carry ``e^eps``
exactly); its evidence has the shape its rule declares (``EVIDENCE`` in the rule's
module, :mod:`samplers.json_shape`).  Numbers are exact and finite; ``eps`` is at least 0
and at most the largest double, ``delta`` in [0, 1], a ``ratio`` at least 1 with ``ln``
of it at most ``eps``, and ``eps_upper`` is what the proof's eps rounds up to.  Anything
else is a :class:`MalformedProof`: NaN, ``inf``, ``1/0``, ``1e400``, ``10^400`` as eps, a
missing or unknown key, a value of the wrong type.  Whether the claim *holds* is the
rule's checker's question, not this module's.
"""

from __future__ import annotations

import importlib
import sys
from fractions import Fraction
from typing import Any

from samplers.errors import DPHybridError
from samplers.json_shape import ANY, OBJECT, RATIONAL, check
from samplers.lang.exact import exact
from samplers.readers import short_repr
from verifiers.epsilon import eps_upper as ratio_eps_upper
from verifiers.prover.proof import Number, Proof, round_up

MAX_EPS = Fraction(sys.float_info.max)  # an eps beyond this has no double to round it up to

_FIELDS = {"rule": str, "mechanism": str, "params": OBJECT, "eps": RATIONAL, "eps_upper": ANY,
           "delta": RATIONAL, "checked": bool, "solver": str, "evidence": OBJECT, "ratio?": RATIONAL}


class MalformedProof(DPHybridError):
    """A proof object that breaks its contract (see the module docstring)."""


def read_proof(d: Any, where: str = "proof") -> Proof:
    """The :class:`Proof` ``d`` describes (unchecked: ``checked`` is False until its rule's checker
    confirms it), or :class:`MalformedProof` naming the first thing wrong and where."""
    from verifiers.prover.prove import RULES

    check(_FIELDS, d, where, error=MalformedProof)
    if d["rule"] not in RULES:
        raise MalformedProof(f"{where}: unknown proof rule {short_repr(d['rule'])} (known: {', '.join(RULES)})")
    rule = importlib.import_module(RULES[d["rule"]])
    check(rule.EVIDENCE, d["evidence"], f"{where}.evidence", error=MalformedProof)
    eps = _number(d["eps"], f"{where}.eps", Fraction(0), MAX_EPS)
    delta = _number(d["delta"], f"{where}.delta", Fraction(0), Fraction(1))
    ratio = None
    if "ratio" in d:
        if not rule.RATIO:
            raise MalformedProof(f"{where}: a proof by the {d['rule']} rule has no ratio")
        ratio = exact(d["ratio"])
        if ratio < 1:
            raise MalformedProof(f"{where}.ratio: {short_repr(d['ratio'])} is below 1 (e^eps for eps >= 0)")
        if ratio_eps_upper(ratio) > round_up(eps):
            raise MalformedProof(f"{where}: the ratio {short_repr(d['ratio'])} (e^eps) is above e^eps for the "
                                 f"proof's eps = {short_repr(d['eps'])}")
    proof = Proof(rule=d["rule"], mechanism=d["mechanism"], params=dict(d["params"]), eps=eps,
                  evidence=d["evidence"], delta=delta, solver=d["solver"], ratio=ratio)
    stated = d["eps_upper"]
    if isinstance(stated, bool) or not isinstance(stated, (int, float)) or stated != proof.eps_upper:
        raise MalformedProof(f"{where}.eps_upper: {short_repr(stated)} is not the proof's eps rounded up "
                             f"({proof.eps_upper!r})")
    return proof


def _number(v: Any, where: str, lo: Fraction, hi: Fraction) -> Number:
    """An exact number in [lo, hi] (its shape already checked): a JSON float stays that float."""
    q = exact(v)
    if not lo <= q <= hi:
        shown = "the largest double" if hi == MAX_EPS else str(hi)
        raise MalformedProof(f"{where}: {short_repr(v)} is outside [{lo}, {shown}]")
    return v if isinstance(v, float) else q
