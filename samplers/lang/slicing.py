"""Program slices: the sub-program that computes some of the output components.

The backward slice of a set of output positions holds every node those outputs depend on
(their inputs, draws and arithmetic), nothing else.  Every node of the slice computes what it
computes in the whole program from the same inputs and the same draws, and the draws left
out are independent of those kept, so the slice's outputs have exactly the whole program's
joint law on those components: a probability computed on a slice is the whole mechanism's
probability of the same event.  The prover composes independent slices
(:mod:`verifiers.prover.composition`); the search certifies events on small slices of large
programs (:mod:`hybrid.searcher.slices`).
"""

from __future__ import annotations

from samplers.lang.builder import draws_randomness, replay
from samplers.lang.domain import Domain
from samplers.lang.ir import Node, Program


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def split(program: Program) -> list[list[int]]:
    """Output positions grouped into parts that share no input and no draw (union-find on the DAG).

    Every non-constant node joins its arguments' groups, so two outputs meet exactly
    when their slices share a node that is an input, a draw or computed from one.  Computed once
    per program (the search's slices and the composition rule both ask).
    """
    if "slicing.split" not in program._meta:
        program._meta["slicing.split"] = _split(program, through_inputs=True)
    return [list(g) for g in program._meta["slicing.split"]]


def split_draws(program: Program) -> list[list[int]]:
    """Output positions grouped into parts that share no draw and no value computed from one, though
    they may read the same inputs and values computed from inputs alone (svt3 and svt4 run on one
    input): parts of independent randomness given the input."""
    return [list(g) for g in _split(program, through_inputs=False)]


def _split(program: Program, *, through_inputs: bool) -> list[list[int]]:
    parent = list(range(len(program.nodes)))
    first_read: dict[int, int] = {}  # input index -> a node reading it (the builder shares them; be sure)
    random: list[bool] = []  # does the node's value depend on a draw?
    for i, node in enumerate(program.nodes):
        random.append(draws_randomness(node.op, node.attr) or any(random[a] for a in node.args))
        links = [a for a in node.args if program.nodes[a].op != "const" and (through_inputs or random[a])]
        if node.op == "input" and through_inputs:
            links.append(first_read.setdefault(node.attr, i))
        for a in links:
            ra, ri = _find(parent, a), _find(parent, i)
            if ra != ri:
                parent[ra] = ri
    groups: dict[int, list[int]] = {}
    for pos, o in enumerate(program.outputs):
        groups.setdefault(_find(parent, o), []).append(pos)
    return list(groups.values())


def backward_slice(program: Program, outputs: list[int]) -> list[int]:
    """Node ids the given output positions depend on, in order."""
    seen: set[int] = set()
    stack = [program.outputs[p] for p in outputs]
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack.extend(program.nodes[i].args)
    return sorted(seen)


def inputs_read(program: Program, nodes: list[int]) -> list[int]:
    """The input coordinates that the nodes ``nodes`` read, in order."""
    return sorted({program.nodes[i].attr for i in nodes if program.nodes[i].op == "input"})


def local_form(program: Program, outputs: list[int], inputs: list[int],
               ids: list[int] | None = None) -> tuple[tuple[Node, ...], tuple[int, ...]]:
    """The slice of ``outputs`` (its nodes ``ids`` when known) renumbered from 0, input ``inputs[k]``
    renamed ``k``, and its outputs.

    Parts with equal local forms (and domains) have equal sub-programs: a cheap key for them.
    """
    rename = {v: k for k, v in enumerate(inputs)}
    ids = backward_slice(program, outputs) if ids is None else ids
    at = {old: k for k, old in enumerate(ids)}
    local = tuple(Node(n.op, tuple(at[a] for a in n.args), rename[n.attr] if n.op == "input" else n.attr,
                       n.lo, n.hi, n.kind, n.bottom) for n in (program.nodes[i] for i in ids))
    return local, tuple(at[program.outputs[p]] for p in outputs)


def part_program(program: Program, outputs: list[int], inputs: list[int]) -> Program:
    """The sub-program of ``outputs``: their slice, input ``inputs[k]`` renamed ``k``.

    The slice is cut out before the replay, so a part costs its own size, not the program's.
    Its domain is the program's on ``inputs``, its neighbour relation the program's.
    """
    local, outs = local_form(program, outputs, inputs)
    nodes, outs = replay(local, outs)
    return Program(
        name=f"{program.name}[part]", params=program.params, nodes=tuple(nodes), outputs=tuple(outs),
        tuple_output=program.tuple_output,
        domain=Domain(tuple(program.domain.lo[i] for i in inputs), tuple(program.domain.hi[i] for i in inputs)),
        neighbours=program.neighbours,
    )


def output_prefix(program: Program, k: int) -> tuple[Program, list[int]]:
    """The sub-program of the first ``k`` output components and the input coordinates it reads
    (its input ``j`` is the program's ``inputs[j]``): their exact joint law, at the slice's cost."""
    outs = list(range(k))
    inputs = inputs_read(program, backward_slice(program, outs))
    return part_program(program, outs, inputs), inputs
