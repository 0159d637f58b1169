"""Try the proof rules on a program; report a proof only after its independent check.

Each rule is a module listed in :data:`RULES` with the shape of its evidence, ``EVIDENCE``
(:mod:`samplers.json_shape`; a proof file's evidence must have it), ``RATIO`` (whether its
proofs carry ``e^eps`` exactly), and these functions:

* ``attempt(program, eps) -> Proof | NoProof`` -- prove ``eps``-DP (``eps`` a ``Fraction``),
  or, with ``eps=None``, the smallest level the rule can prove;
* ``check(program, proof) -> str | None`` -- the independent re-check, sharing no code
  with ``attempt``'s synthesis: ``None`` when it confirms, else what failed;
* ``confirm(program, proof) -> str | None`` -- the re-check of a proof nobody vouches for
  (a proof file, a part's proof inside one): ``check`` and whatever it leaves to
  ``attempt`` (the alignment checker re-asks z3 on a sample of the paths; ``confirm``
  discharges every path's conditions again).

:func:`prove` runs the rules in order under a time limit (:mod:`samplers.deadline`; a
rule stopped by it gives a :class:`NoProof` saying so) and returns the proof with the
smallest eps that its checker confirmed (a pure eps-DP proof before any (eps, delta) one),
or the reasons every rule gave.  With a claimed ``delta`` (and ``eps``) a proof counts only
when its delta is at most the claim; a rule whose proof carries more says by how much.
:data:`DELTA_RULES` are the rules whose proofs carry a delta at a given eps.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from dataclasses import replace
from fractions import Fraction
from typing import Iterator, Sequence

from samplers import deadline
from samplers.lang.ir import Program
from samplers.errors import ParameterError
from verifiers.prover.proof import NoProof, Proof, check_delta, round_up

RULES: dict[str, str] = {  # rule name -> module implementing attempt() and check()
    "alignment": "verifiers.prover.alignment",
    "gaussian": "verifiers.prover.gaussian",
    "composition": "verifiers.prover.composition",
    "every_n": "verifiers.prover.every_n",  # these two only with every_n=True: a proof for every input size
    "every_n_reduce": "verifiers.prover.every_n_reduce",
}
EVERY_N_RULES = ("every_n", "every_n_reduce")
DELTA_RULES = ("gaussian",)  # rules that prove (eps, delta(eps)) at a given eps


_CHECKED: dict[tuple, Proof] | None = None  # within remembering(): (rule, program shape, eps) -> checked proof


@contextmanager
def remembering() -> Iterator[None]:
    """Within the block, a proof a rule's checker confirmed is kept for that rule on the same program
    shape and eps, and given again instead of proved again: a search on parts proves each part, then
    the composition rule proves the same parts (cut from the whole, named otherwise) once more."""
    global _CHECKED
    outer = _CHECKED
    _CHECKED = {} if outer is None else outer
    try:
        yield
    finally:
        _CHECKED = outer


def _remembered(name: str, program: Program, eps: Fraction | None) -> tuple[tuple | None, Proof | None]:
    """The key of rule ``name`` on the program without its name (what a rule and its checker read) at
    ``eps``, and the proof kept for it; no key outside :func:`remembering`, or when a parameter's
    value cannot be a key (a program's nodes are hashed once to look, once to keep)."""
    if _CHECKED is None:
        return None, None
    key = (name, program.params, program.nodes, program.outputs, program.tuple_output, program.domain,
           program.neighbours, eps)
    try:
        return key, _CHECKED.get(key)
    except TypeError:
        return None, None


def _checked(name: str, program: Program, eps: Fraction | None) -> Proof | NoProof:
    """Rule ``name``'s proof once its independent checker confirms it, else why not."""
    key, kept = _remembered(name, program, eps)
    if kept is not None:
        return replace(kept, mechanism=program.name)  # the proof as found for this program
    rule = importlib.import_module(RULES[name])
    try:
        found = rule.attempt(program, eps)
    except deadline.TimeLimitReached as e:  # this call's budget or an outer one (a search's): it says which
        return NoProof(str(e), rule=name)
    except RecursionError:  # a program whose values nest deeper than the rule's recursive walks
        return NoProof("the program's values nest too deeply for this rule", rule=name)
    if isinstance(found, NoProof):
        return found
    problem = rule.check(program, found)
    if problem is not None:
        return NoProof(f"the independent checker rejected the proof: {problem}", rule=name)
    if key is not None:
        _CHECKED[key] = found
    return found


def per_n_rules() -> list[str]:
    """The rules :func:`prove` tries by default: proofs at the traced size (not the every-n ones)."""
    return [r for r in RULES if r not in EVERY_N_RULES]


def prove(program: Program, eps: Fraction | None = None, *, delta: Fraction | float | None = None,
          rules: Sequence[str] | None = None, time_budget: float = 30.0,
          every_n: bool = False) -> Proof | list[NoProof]:
    """The checked proof with the smallest eps (at most ``eps`` when given; pure DP first), else why not.

    ``delta`` (with ``eps``): the claim is (eps, delta)-DP; a proof whose delta exceeds it is no proof.
    ``every_n``: a proof for every input size n >= 1 (the every-n rules alone); a mechanism not
    written with the loop construct is a :class:`~verifiers.prover.every_n.NotEveryN`.
    """
    if every_n:
        from verifiers.prover.every_n import loop_of

        if delta is not None:
            raise ParameterError("every-n proofs are of pure eps-DP: no delta")
        loop_of(program)  # NotEveryN when it is no scan loop
        rules = list(EVERY_N_RULES)
    if delta is not None:
        if eps is None:
            raise ParameterError("a claimed delta needs a claimed eps: delta is a function of eps")
        delta = check_delta(delta)
    failures: list[NoProof] = []
    best: Proof | None = None
    with deadline.time_limit(time_budget):
        for name in rules or per_n_rules():
            found = _checked(name, program, eps)
            if isinstance(found, NoProof):
                failures.append(found)
                continue
            if delta is not None and Fraction(found.delta) > delta:
                failures.append(NoProof(f"proves delta <= {round_up(found.delta)!r} at the claimed eps, "
                                        f"not the claimed delta {float(delta)!r}", rule=name))
                continue
            if best is None or (found.delta != 0, found.eps) < (best.delta != 0, best.eps):
                best = replace(found, checked=True)
    return best if best is not None else failures
