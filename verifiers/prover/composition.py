"""The composition rule: independent parts of an output, each at its exact level.

When the output's components split into parts whose backward slices share no input and
no random draw, ``P(o | x)`` is the product of the parts' laws, each a function of its
own inputs only.  Over the program's neighbour relation the level then composes:

* ``one_differ`` / ``replace_one``: one coordinate changes, so one part's law changes --
  the level is the **largest** part level;
* ``all_differ``: every part may change at once, and the ratio of a product is the
  product of ratios -- the level is the **product** of the part levels;
* ``increasing`` / ``decreasing``: every part may change at once too, each by a monotone
  move of its own inputs (or none) -- the **product** again, here an upper bound only (the
  parts move in one direction together, so their worst pairs may not combine);
* a custom relation: only when one part reads every input (the whole program), since a
  predicate on whole inputs says nothing about a part.

When the program is one part with continuous noise (no exact sweep of the whole), parts that
read the same inputs but share no draw (svt3 and svt4 run side by side on one input,
``svt34_parallel``) are tried: they are independent given the input, so ``P(o | x)`` is still the
product of the parts' laws and the level is at most the **sum** of the part levels in eps
(sequential composition; ``combine`` is ``"sum"``), under any relation whose restriction to a
part's inputs is the same relation there or no change: the built-in ones, and a custom one when
every reading part reads all inputs.

Each part level is the exact global level of the part's sub-program (its slice with the
inputs renumbered), swept by an exact backend reached through
:func:`verifiers.backends.get_backend`; parts with the same sub-program (``rr``'s clients,
``histogram_geom``'s bins) are swept once.  Part levels are exact ratios, so the proved
``e^eps`` is an exact ratio too (``Proof.ratio``), and ``eps`` its sound upper end.

A part that draws continuous noise has no exact level; the other rules of
:func:`verifiers.prover.prove.per_n_rules` prove it instead (their checker-confirmed pure
eps-DP proof, kept in the evidence), so ``noisy_hist1`` is one Laplace part proved once.
Such levels compose with the exact ones by max or sum in eps; the proof then has no
exact ratio, only its sound ``eps``.

The evidence (re-checked by :mod:`verifiers.prover.composition_check`) lists every part
(outputs, inputs, draws, class) and every class of identical parts (exact ratio, the
backend, the neighbour pairs swept and a witness pair attaining the level).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from samplers import deadline
from samplers.errors import LimitExceeded
from samplers.json_shape import ANY, NAT, RATIONAL, Nullable, check as check_shape
from samplers.lang.builder import draws_randomness
from samplers.lang.ir import BOTTOM, CONTINUOUS_NOISE, Program
from samplers.lang.slicing import backward_slice, inputs_read, local_form, part_program, split, split_draws
from samplers.lang.neighbours import AllDiffer, Monotone, OneDiffer, ReplaceOne
from verifiers.backends import choose, get_backend
from verifiers.base import neighbour_pairs
from verifiers.epsilon import eps_upper, within_exp
from verifiers.prover.composition_check import check, confirm  # the rule's independent checker
from verifiers.prover.proof import NoProof, Proof, number_json, round_up
from verifiers.prover.proof_json import MalformedProof, read_proof
from verifiers.ratio import INF, Ratio, ratio_str

RULE = "composition"
# A part is swept over at most this many neighbour pairs (the search's global check has the
# same size limit): a count, so whether a proof is found does not depend on the machine.
MAX_PART_PAIRS = 20_000
RATIO = True  # e^eps exactly when every part level is exact
ADDING = ("product", "sum")  # the combinations that multiply ratios (add levels in eps)
_SWEPT = {"ratio": RATIONAL, "backend": str, "pairs": NAT,
          "witness": Nullable({"x": [int], "x_prime": [int], "output": ANY})}
_PROVED = {"eps": RATIONAL, "rule": str, "proof": read_proof}  # a part's proof, read as any proof is
_SHAPE = {"neighbours": str, "combine": str, "ratio": RATIONAL, "sub_eps": RATIONAL,
          "classes": [lambda c, where: check_shape(_PROVED if isinstance(c, dict) and "proof" in c else _SWEPT, c,
                                                   where, error=MalformedProof)],
          "parts": [{"outputs": [NAT], "inputs": [NAT], "draws": [NAT], "class": Nullable(NAT)}]}


def _evidence(evidence: Any, where: str) -> None:
    """The evidence's shape, as a proof file must have it (:mod:`verifiers.prover.proof_json`), each
    part's class one of those listed."""
    check_shape(_SHAPE, evidence, where, error=MalformedProof)
    for k, part in enumerate(evidence["parts"]):
        if part["class"] is not None and part["class"] >= len(evidence["classes"]):
            raise MalformedProof(f"{where}.parts[{k}].class: {part['class']} names no class "
                                 f"({len(evidence['classes'])} listed)")


EVIDENCE = _evidence


def combination(program: Program, read: list[list[int]], shared: bool = False) -> str | None:
    """How part levels compose under the program's relation (``read``: the inputs of each part;
    ``shared``: parts may read the same inputs, and share no draw).

    A custom relation is a predicate on whole inputs: it applies to a part only when that
    part reads every input and (unless ``shared``) no other part reads any.
    """
    nb = program.neighbours
    whole = list(range(program.domain.size))
    if shared:
        builtin = isinstance(nb, (OneDiffer, ReplaceOne, AllDiffer, Monotone))
        return "sum" if builtin or all(r == whole for r in read if r) else None
    if isinstance(nb, (OneDiffer, ReplaceOne)):
        return "max"
    if isinstance(nb, (AllDiffer, Monotone)):
        return "product"
    reading = [r for r in read if r]
    return "single" if not reading or reading == [whole] else None


def _json_output(o: Any) -> Any:
    if isinstance(o, tuple):
        return [_json_output(v) for v in o]
    return "bottom" if o is BOTTOM else o


def _level(sub: Program) -> tuple[Ratio, dict[str, Any]] | NoProof:
    """The exact global level of a part's sub-program, with how it was found."""
    if sum(1 for _ in itertools.islice(neighbour_pairs(sub), MAX_PART_PAIRS + 1)) > MAX_PART_PAIRS:
        return NoProof(f"a part has more than {MAX_PART_PAIRS} neighbour pairs over {sub.domain.describe()} "
                       "(the sweep limit of the composition rule)", rule=RULE)
    name = choose(sub)
    try:
        g = get_backend(sub, name).global_epsilon()
    except LimitExceeded as e:  # a node budget, a memory limit
        return NoProof(f"the {name} backend stopped sweeping a part: {e}", rule=RULE)
    if not g.complete:
        return NoProof(f"the sweep of a part stopped before every neighbour pair: {g.stopped}", rule=RULE)
    r = max(g.ratio, Fraction(1))  # a part with no neighbour pair changes nothing
    witness = None if g.x is None else {"x": list(g.x), "x_prime": list(g.x_prime), "output": _json_output(g.output)}
    return r, {"ratio": ratio_str(r), "backend": name, "pairs": g.pairs, "witness": witness}


def _where(program: Program, outputs: list[int]) -> str:
    if program.arity == 1:
        return "the output"
    return f"output {outputs[0]}" if len(outputs) == 1 else "outputs " + ", ".join(str(p) for p in outputs)


def _sub_proof(sub: Program) -> tuple[Fraction, dict[str, Any]] | NoProof:
    """The level another rule proves (checker-confirmed) for a part that draws continuous noise."""
    from verifiers.prover.prove import per_n_rules, prove

    others = [r for r in per_n_rules() if r != RULE]  # a part is proved at its own size
    if not others:
        return NoProof("a part draws continuous noise and no other proof rule is registered to prove it", rule=RULE)
    found = prove(sub, rules=others)
    if isinstance(found, list):
        return NoProof("no rule proved a part that draws continuous noise: "
                       + "; ".join(f"{n.rule}: {n.reason}" for n in found), rule=RULE)
    if found.delta != 0:
        return NoProof(f"the {found.rule} rule proves a part only (eps, delta)-DP; the composition rule "
                       "composes pure eps-DP parts", rule=RULE)
    return Fraction(found.eps), {"eps": number_json(found.eps), "rule": found.rule, "proof": found.to_json()}


def _part(program: Program, outs: list[int], nodes: list[int]) -> dict[str, Any]:
    return {"outputs": outs, "inputs": inputs_read(program, nodes),
            "draws": [i for i in nodes if draws_randomness(program.nodes[i].op, program.nodes[i].attr)]}


def _continuous(program: Program, part: dict[str, Any]) -> bool:
    return any(program.nodes[i].op in CONTINUOUS_NOISE for i in part["draws"])


def composed_upper(ratio: Ratio, sub_eps: Fraction, how: str) -> float:
    """A float at least the composed level: ``ln ratio`` and ``sub_eps`` by max, or by sum for ``product``
    and ``sum``."""
    if how in ADDING:
        return round_up(Fraction(eps_upper(ratio)) + sub_eps)
    return max(eps_upper(ratio), round_up(sub_eps))


def attempt(program: Program, eps: Fraction | None = None) -> Proof | NoProof:
    """Prove the composed level (at most ``eps`` when given), or say why not."""
    sliced = [(outs, backward_slice(program, outs)) for outs in split(program)]
    parts = [_part(program, outs, nodes) for outs, nodes in sliced]
    how = combination(program, [part["inputs"] for part in parts])
    if len(parts) == 1 and _continuous(program, parts[0]):  # no exact sweep of the whole: split the draws
        drawn = [(outs, backward_slice(program, outs)) for outs in split_draws(program)]
        by_draws = [_part(program, outs, nodes) for outs, nodes in drawn]
        if len(by_draws) > 1 and (summed := combination(program, [q["inputs"] for q in by_draws], True)):
            sliced, parts, how = drawn, by_draws, summed  # one input, independent draws: sequential composition
    reading = sum(1 for part in parts if part["inputs"])
    if how is None:
        return NoProof(f"the custom neighbour relation {program.neighbours.name} is a predicate on whole inputs: "
                       f"it does not apply to {reading} independent parts that read some of them", rule=RULE)
    classes: list[dict[str, Any]] = []
    levels: list[Ratio | Fraction] = []
    seen: dict[tuple, int] = {}
    replayed: dict[tuple, tuple] = {}  # a part's local form -> its sub-program's key (replayed once)
    for k, part in enumerate(parts):
        deadline.check("composing independent parts")  # a part at a time: 100,000 parts take seconds
        part["class"] = None  # a part that reads no input has the same law for every x
        if not part["inputs"]:
            continue
        cont = _continuous(program, part)
        if cont and reading == 1 and len(parts) == 1:
            draw = next(i for i in part["draws"] if program.nodes[i].op in CONTINUOUS_NOISE)
            return NoProof(f"the program is one part and draws continuous noise ({program.nodes[draw].op} at "
                           f"node %{draw}): nothing to compose", rule=RULE, where=f"draw %{draw}")
        local = (local_form(program, part["outputs"], part["inputs"], sliced[k][1]),
                 tuple(program.domain.lo[i] for i in part["inputs"]), tuple(program.domain.hi[i] for i in part["inputs"]))
        if local not in replayed:
            sub = part_program(program, part["outputs"], part["inputs"])
            replayed[local] = (sub.nodes, sub.outputs, sub.domain)
        key = replayed[local]
        if key not in seen:
            found = _sub_proof(sub) if cont else _level(sub)
            if isinstance(found, NoProof):
                return NoProof(found.reason, rule=RULE, where=f"part {k} ({_where(program, part['outputs'])})")
            level, info = found
            if level == INF:
                return NoProof(f"not eps-DP for any eps: {_where(program, part['outputs'])} (a part) can "
                               "take a value impossible under a neighbour input", rule=RULE, where=f"part {k}",
                               details=info)
            seen[key] = len(classes)
            classes.append(info)
            levels.append(level)
        part["class"] = seen[key]
    ratio: Ratio = Fraction(1)
    sub_eps = Fraction(0)
    for part in parts:
        c = part["class"]
        if c is None:
            continue
        if "eps" in classes[c]:
            sub_eps = sub_eps + levels[c] if how in ADDING else max(sub_eps, levels[c])
        else:
            ratio = ratio * levels[c] if how in ADDING else max(ratio, levels[c])
    upper = composed_upper(ratio, sub_eps, how)
    exact = not any("eps" in c for c in classes)
    evidence = {"neighbours": program.neighbours.name, "combine": how, "ratio": ratio_str(ratio),
                "sub_eps": number_json(sub_eps), "classes": classes, "parts": parts}
    if eps is not None and not (within_exp(ratio, eps) if exact else Fraction(upper) <= eps):
        level = f"e^eps = {ratio_str(ratio)}" if exact else "eps"
        return NoProof(f"the composed level {level} (eps <= {upper:.6g}) is not within the claim {float(eps):g}",
                       rule=RULE, details=evidence)
    swept = sum(c.get("pairs", 0) for c in classes)
    how_found = sorted({c["backend"] for c in classes if "backend" in c} | {f"{c['rule']} rule" for c in classes
                                                                             if "rule" in c})
    return Proof(rule=RULE, mechanism=program.name, params=dict(program.params), eps=upper,
                 ratio=ratio if exact else None, evidence=evidence,
                 solver=f"{len(classes)} distinct of {len(parts)} parts, by {', '.join(how_found) or 'none'} "
                        f"({swept} neighbour pairs swept)")
