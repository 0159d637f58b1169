"""The composition rule: independent parts of an output, each at its exact level.

When the output's components split into parts whose backward slices share no input and
no random draw, ``P(o | x)`` is the product of the parts' laws, each a function of its
own inputs only.  Over the program's neighbour relation the level then composes:

* ``one_differ`` / ``replace_one``: one coordinate changes, so one part's law changes --
  the level is the **largest** part level;
* ``all_differ``: every part may change at once, and the ratio of a product is the
  product of ratios -- the level is the **product** of the part levels;
* a custom relation: only when one part reads every input (the whole program), since a
  predicate on whole inputs says nothing about a part.

Each part level is the exact global level of the part's sub-program (its slice with the
inputs renumbered), swept by an exact backend reached through
:func:`verifiers.backends.get_backend`; parts with the same sub-program (``rr``'s clients,
``histogram_geom``'s bins) are swept once.  Part levels are exact ratios, so the proved
``e^eps`` is an exact ratio too (``Proof.ratio``), and ``eps`` its sound upper end.

The evidence (re-checked by :mod:`verifiers.prover.composition_check`) lists every part
(outputs, inputs, draws, class) and every class of identical parts (exact ratio, the
backend, the neighbour pairs swept and a witness pair attaining the level).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

from samplers.errors import BudgetExceeded
from samplers.lang.builder import Builder, draws_randomness, replay
from samplers.lang.domain import Domain
from samplers.lang.ir import BOTTOM, CONTINUOUS_NOISE, Node, Program
from samplers.lang.neighbours import AllDiffer, OneDiffer, ReplaceOne
from verifiers.backends import choose, get_backend
from verifiers.base import neighbour_pairs
from verifiers.epsilon import eps_upper, within_exp
from verifiers.prover.composition_check import check  # noqa: F401  (the rule's independent checker)
from verifiers.prover.proof import NoProof, Proof
from verifiers.ratio import INF, Ratio, ratio_str

RULE = "composition"
# A part is swept over at most this many neighbour pairs (the search's global check has the
# same size limit): a count, so whether a proof is found does not depend on the machine.
MAX_PART_PAIRS = 20_000


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def split(program: Program) -> list[list[int]]:
    """Output positions grouped into parts that share no input and no draw (union-find on the DAG).

    Every non-constant node joins its arguments' groups, so two outputs meet exactly
    when their slices share a node that is an input, a draw or computed from one.
    """
    parent = list(range(len(program.nodes)))
    for i, node in enumerate(program.nodes):
        for a in node.args:
            if program.nodes[a].op != "const":
                ra, ri = _find(parent, a), _find(parent, i)
                if ra != ri:
                    parent[ra] = ri
    groups: dict[int, list[int]] = {}
    for pos, o in enumerate(program.outputs):
        groups.setdefault(_find(parent, o), []).append(pos)
    return list(groups.values())


def _slice(program: Program, outputs: list[int]) -> list[int]:
    """Node ids the given output positions depend on, in order."""
    seen: set[int] = set()
    stack = [program.outputs[p] for p in outputs]
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack.extend(program.nodes[i].args)
    return sorted(seen)


def part_program(program: Program, outputs: list[int], inputs: list[int]) -> Program:
    """The sub-program of ``outputs``: their slice, input ``inputs[k]`` renamed ``k``."""
    rename = {v: k for k, v in enumerate(inputs)}

    def rewrite(node: Node, args: tuple[int, ...], b: Builder, old: int) -> int | None:
        if node.op == "input":
            return b.input(rename[node.attr], node.lo, node.hi)
        return None

    nodes, outs = replay(program.nodes, [program.outputs[p] for p in outputs], rewrite=rewrite)
    whole = inputs == list(range(program.domain.size))
    return Program(
        name=f"{program.name}[part]", params=program.params, nodes=tuple(nodes), outputs=tuple(outs),
        tuple_output=program.tuple_output,
        domain=Domain(tuple(program.domain.lo[i] for i in inputs), tuple(program.domain.hi[i] for i in inputs)),
        neighbours=program.neighbours, symmetric=program.symmetric and whole,
    )


def combination(program: Program, reading: int) -> str | None:
    """How part levels compose under the program's relation (``reading`` parts read inputs)."""
    nb = program.neighbours
    if isinstance(nb, (OneDiffer, ReplaceOne)):
        return "max"
    if isinstance(nb, AllDiffer):
        return "product"
    return "single" if reading <= 1 else None


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
    except BudgetExceeded as e:
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


def attempt(program: Program, eps: Fraction | None = None) -> Proof | NoProof:
    """Prove the composed exact level (at most ``eps`` when given), or say why not."""
    groups = split(program)
    parts, reading = [], 0
    for outs in groups:
        nodes = _slice(program, outs)
        inputs = sorted(program.nodes[i].attr for i in nodes if program.nodes[i].op == "input")
        draws = [i for i in nodes if draws_randomness(program.nodes[i].op, program.nodes[i].attr)]
        cont = [i for i in nodes if program.nodes[i].op in CONTINUOUS_NOISE]
        if cont and inputs:
            return NoProof(f"{_where(program, outs)} (a part) draws continuous noise ({program.nodes[cont[0]].op} at "
                           f"node %{cont[0]}); the composition rule needs exact part levels", rule=RULE,
                           where=f"draw %{cont[0]}")
        reading += bool(inputs)
        parts.append({"outputs": outs, "inputs": inputs, "draws": draws})
    how = combination(program, reading)
    if how is None:
        return NoProof(f"the custom neighbour relation {program.neighbours.name} cannot be split over "
                       f"{reading} independent parts", rule=RULE)
    classes: list[dict[str, Any]] = []
    seen: dict[tuple, int] = {}
    total: Ratio = Fraction(1)
    for k, part in enumerate(parts):
        if not part["inputs"]:
            part["class"] = None  # reads no input: the same law for every x
            continue
        sub = part_program(program, part["outputs"], part["inputs"])
        key = (sub.nodes, sub.outputs, sub.domain)
        if key not in seen:
            found = _level(sub)
            if isinstance(found, NoProof):
                return NoProof(found.reason, rule=RULE, where=f"part {k} ({_where(program, part['outputs'])})")
            r, info = found
            if r == INF:
                return NoProof(f"not eps-DP for any eps: {_where(program, part['outputs'])} (a part) can "
                               "take a value impossible under a neighbour input", rule=RULE, where=f"part {k}", details=info)
            seen[key] = len(classes)
            classes.append(info | {"level": r})
        part["class"] = seen[key]
    levels = [c.pop("level") for c in classes]
    for part in parts:
        if part["class"] is not None:
            r = levels[part["class"]]
            total = max(total, r) if how in ("max", "single") else total * r
    evidence = {"neighbours": program.neighbours.name, "combine": how, "ratio": ratio_str(total),
                "classes": classes, "parts": parts}
    if eps is not None and not within_exp(total, eps):
        return NoProof(f"the composed exact level e^eps = {ratio_str(total)} (eps <= {eps_upper(total):.6g}) "
                       f"is not within the claim {float(eps):g}", rule=RULE, details=evidence)
    swept = sum(c["pairs"] for c in classes)
    backends = ", ".join(sorted({c["backend"] for c in classes})) or "none"
    return Proof(rule=RULE, mechanism=program.name, params=dict(program.params), eps=eps_upper(total),
                 ratio=total, evidence=evidence,
                 solver=f"exact global sweeps ({backends}): {len(classes)} distinct of {len(parts)} parts, "
                        f"{swept} neighbour pairs")
