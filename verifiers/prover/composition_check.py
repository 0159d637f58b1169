"""Independent re-check of a composition proof (:mod:`verifiers.prover.composition`).

Shares no code with the rule's synthesis: dependencies are propagated forwards (each
node's set of inputs and draws) instead of grouped by union-find, sub-programs are cut
out of the node list by hand instead of replayed through the builder, every part level
is swept again by the BDD backend (the rule picks by size, usually the enumerator), a
part with continuous noise has its sub-proof re-checked by that rule's own checker on the
cut sub-program, and the composition formula is re-derived from the neighbour relation.  Every claim of the
evidence is compared exactly: the partition of the outputs, each part's inputs and
draws, that parts of one class have the same sub-program, each class's ratio, the
composed ratio, and that the proof's ``eps`` is at least ``ln`` of it.
"""

from __future__ import annotations

import importlib
from fractions import Fraction
from typing import Any

from samplers import deadline
from samplers.errors import DPHybridError
from samplers.lang.builder import draws_randomness
from samplers.lang.domain import Domain
from samplers.lang.ir import CONTINUOUS_NOISE, Node, Program
from samplers.lang.neighbours import AllDiffer, Monotone, OneDiffer, ReplaceOne
from verifiers.backends import get_backend
from verifiers.epsilon import log_bracket
from verifiers.prover.proof import Proof, number_from_json
from verifiers.prover.proof_json import read_proof
from verifiers.ratio import INF, parse_ratio, ratio_str


def _dependencies(program: Program) -> list[frozenset]:
    """For every node, the inputs ``("x", i)`` and draws ``("d", node)`` its value depends on."""
    deps: list[frozenset] = []
    for i, n in enumerate(program.nodes):
        own = {("x", n.attr)} if n.op == "input" else {("d", i)} if draws_randomness(n.op, n.attr) else set()
        deps.append(frozenset(own).union(*(deps[a] for a in n.args)))
    return deps


def _cut(program: Program, outputs: list[int], inputs: list[int], candidates: list[int]) -> Program:
    """The nodes ``outputs`` reach, renumbered, input ``inputs[k]`` renamed ``k``.

    ``candidates`` (sorted) holds every node they can reach: the part's nodes and constants.
    """
    needed = {program.outputs[p] for p in outputs}
    for i in reversed(candidates):  # arguments come before their users
        if i in needed:
            needed.update(program.nodes[i].args)
    order = sorted(needed)
    new = {old: k for k, old in enumerate(order)}
    rename = {v: k for k, v in enumerate(inputs)}
    nodes = []
    for old in order:
        n = program.nodes[old]
        attr = rename[n.attr] if n.op == "input" else n.attr
        nodes.append(Node(n.op, tuple(new[a] for a in n.args), attr, n.lo, n.hi, n.kind, n.bottom))
    dom = Domain(tuple(program.domain.lo[i] for i in inputs), tuple(program.domain.hi[i] for i in inputs))
    return Program(name=f"{program.name}[part]", params=program.params, nodes=tuple(nodes),
                   outputs=tuple(new[program.outputs[p]] for p in outputs), tuple_output=program.tuple_output,
                   domain=dom, neighbours=program.neighbours)


def _proved_level(sub: Program, info: dict[str, Any], complete: bool) -> Fraction | str:
    """A continuous part's level: its sub-proof re-checked on ``sub`` by that rule's checker, or by
    its complete re-check (``confirm``, every condition) when ``complete``."""
    from verifiers.prover.prove import EVERY_N_RULES, RULES

    proof = read_proof(info["proof"])
    if proof.rule not in RULES or proof.rule in ("composition", *EVERY_N_RULES):
        return f"a part's proof is by {proof.rule!r}, not another registered rule"
    if info["rule"] != proof.rule:
        return f"a class says its proof is by the {info['rule']} rule, the proof is by {proof.rule}"
    if proof.delta != 0:
        return "a part's proof is not pure eps-DP"
    rule = importlib.import_module(RULES[proof.rule])
    problem = (rule.confirm if complete else rule.check)(sub, proof)
    if problem is not None:
        return f"the {proof.rule} checker rejects a part's proof: {problem}"
    if Fraction(proof.eps) != Fraction(number_from_json(info["eps"])):
        return f"a class says eps {info['eps']}, its proof {proof.eps}"
    return Fraction(proof.eps)


def _swept_level(sub: Program) -> Any:
    """The exact global level of ``sub`` by the BDD backend, or a string saying why not."""
    try:
        g = get_backend(sub, "bdd").global_epsilon()
    except DPHybridError as e:
        return f"the bdd backend could not sweep a part: {e}"
    if not g.complete:
        return f"the re-sweep of a part stopped: {g.stopped}"
    return max(g.ratio, Fraction(1))


def _members(program: Program, deps: list[frozenset], owner: dict[Any, int]) -> dict[int, set[int]]:
    """Part -> its nodes (those depending on its inputs or draws) and constants, parts disjoint."""
    members: dict[int, set[int]] = {}
    for i, n in enumerate(program.nodes):
        k = owner.get(next(iter(deps[i]))) if deps[i] else None
        if k is not None:
            members.setdefault(k, set()).add(i)
            members[k].update(a for a in n.args if not deps[a])
    return members


def _members_shared(program: Program, deps: list[frozenset], parts: list[dict]) -> dict[int, set[int]]:
    """Part -> every node depending only on its inputs and draws, and constants (parts share inputs)."""
    members: dict[int, set[int]] = {}
    for k, part in enumerate(parts):
        own = {("x", i) for i in part["inputs"]} | {("d", i) for i in part["draws"]}
        members[k] = {i for i in range(len(program.nodes)) if deps[i] <= own}
    return members


def check(program: Program, proof: Proof, *, complete: bool = False) -> str | None:
    """None when every claim of the evidence holds, else the first that does not.  A part's
    sub-proof is re-checked as :func:`verifiers.prover.prove.prove` re-checks proofs (its rule's
    checker: the synthesis discharged every path), or completely when ``complete``."""
    try:
        return _check(program, proof, complete)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        return f"malformed composition evidence ({type(e).__name__}: {e})"


def confirm(program: Program, proof: Proof) -> str | None:
    """:func:`check` of a proof nobody vouches for (a file): every part swept again, every sub-proof
    confirmed completely."""
    return check(program, proof, complete=True)


def _check(program: Program, proof: Proof, complete: bool) -> str | None:
    ev = proof.evidence
    if ev["neighbours"] != program.neighbours.name:
        return f"the proof is for {ev['neighbours']} neighbours, the program has {program.neighbours.name}"
    parts, classes = ev["parts"], ev["classes"]
    listed = sorted(p for part in parts for p in part["outputs"])
    if listed != list(range(program.arity)):
        return "the parts do not list every output exactly once"
    deps = _dependencies(program)
    owner: dict[Any, int] = {}
    shared = False  # do two parts read one input (independent draws: they compose by sum)?
    for k, part in enumerate(parts):
        mine = frozenset().union(*(deps[program.outputs[p]] for p in part["outputs"]))
        for d in mine:
            if owner.setdefault(d, k) != k:
                if d[0] == "x":
                    shared = True
                    continue
                return f"parts {owner[d]} and {k} both depend on draw %{d[1]}"
        if sorted(i for t, i in mine if t == "x") != list(part["inputs"]):
            return f"part {k} lists inputs {part['inputs']}, its outputs read others"
        if sorted(i for t, i in mine if t == "d") != list(part["draws"]):
            return f"part {k} lists draws {part['draws']}, its outputs use others"
    members = _members_shared(program, deps, parts) if shared else _members(program, deps, owner)
    reading = sum(1 for part in parts if part["inputs"])
    nb = program.neighbours
    how = "max" if isinstance(nb, (OneDiffer, ReplaceOne)) else "product" if isinstance(nb, (AllDiffer, Monotone)) else "single"
    if shared:  # a built-in relation restricted to a part's inputs is itself there (or no change)
        whole = list(range(program.domain.size))
        if how == "single" and any(part["inputs"] not in ([], whole) for part in parts):
            return f"a custom relation ({nb.name}) applies to whole inputs, and parts sharing inputs read only some"
        how = "sum"
    if how == "single" and reading and not any(part["inputs"] == list(range(program.domain.size)) for part in parts):
        return f"a custom relation ({nb.name}) applies to whole inputs, and no part reads them all"
    if how == "single" and reading > 1:
        return f"a custom relation ({nb.name}) does not compose over {reading} parts"
    if ev["combine"] != how:
        return f"{nb.name} neighbours compose by {how}, the proof says {ev['combine']}"
    checked: dict[tuple, Any] = {}  # each distinct cut sub-program -> its level, established once
    total: Any = Fraction(1)
    sub_eps = Fraction(0)
    for k, part in enumerate(parts):
        deadline.check("checking a composition proof")  # a part at a time: 100,000 parts take seconds
        c = part["class"]
        if c is None:
            if part["inputs"]:
                return f"part {k} reads inputs but has no class"
            continue
        sub = _cut(program, list(part["outputs"]), list(part["inputs"]), sorted(members.get(k, ())))
        continuous = any(n.op in CONTINUOUS_NOISE for n in sub.nodes)
        if continuous != ("proof" in classes[c]):
            return f"part {k}: a part {'with' if continuous else 'without'} continuous noise needs " + (
                "a proof by another rule" if continuous else "an exact sweep")
        key = (sub.nodes, sub.outputs, sub.domain)
        if key not in checked:  # parts of a class share this key, unless the cut orders constants apart
            r = _proved_level(sub, classes[c], complete) if continuous else _swept_level(sub)
            if isinstance(r, str):
                return f"part {k}: {r}"
            checked[key] = r
        r = checked[key]
        if not continuous and r != parse_ratio(classes[c]["ratio"]):
            return f"part {k}: the re-sweep gives {ratio_str(r)}, its class {c} says {classes[c]['ratio']}"
        if continuous:
            sub_eps = sub_eps + r if how in ("product", "sum") else max(sub_eps, r)
        else:
            total = total * r if how in ("product", "sum") else max(total, r)
    if total != parse_ratio(ev["ratio"]) or Fraction(number_from_json(ev["sub_eps"])) != sub_eps:
        return f"the parts compose to {ratio_str(total)} and eps {sub_eps}, the proof says {ev['ratio']} and {ev['sub_eps']}"
    if proof.ratio is not None and (sub_eps != 0 or total != proof.ratio):
        return f"the proof's exact ratio {ratio_str(proof.ratio)} is not what the parts compose to"
    if total == INF:
        return "a part has an infinite level"
    bound = Fraction(log_bracket(total)[1])  # >= ln total
    if not (bound + sub_eps if how in ("product", "sum") else max(bound, sub_eps)) <= Fraction(proof.eps):
        return f"eps = {proof.eps} is below the composed level (ln {ratio_str(total)} and {sub_eps})"
    return None
