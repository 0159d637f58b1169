"""Lowering ``argmax`` to comparisons and coin flips (an IR rewrite through ``replay``).

Bit-blasting a k-ary argmax directly would enumerate every combination of its
arguments; a left-to-right scan needs only pairwise comparisons.  With
``ties='uniform'`` the scan is reservoir sampling: the i-th value tying the running
maximum replaces the chosen index with probability ``1/c``, where ``c`` is the number
of ties so far, which leaves every tied index with probability exactly ``1/c``.  The
flips are fresh ``draw`` nodes of law ``(1 - 1/c, 1/c)``, one per possible ``c``, so
the rewritten program has exactly the original output distribution (tested against
the enumerator) and no randomised operation other than ``draw``.
"""

from __future__ import annotations

from fractions import Fraction

from samplers.lang.builder import Builder, replay
from samplers.lang.ir import Node, Program


def _scan(b: Builder, args: tuple[int, ...], uniform: bool) -> int:
    best, idx, count = args[0], b.const(0), b.const(1)
    for i, v in enumerate(args[1:], start=1):
        above = b.emit("lt", (best, v))
        take = above
        if uniform:
            tie = b.emit("eq", (best, v))
            count = b.emit("ite", (above, b.const(1), b.emit("ite", (tie, b.emit("add", (count, b.const(1))), count))))
            coin = b.draw(0, (Fraction(1, 2), Fraction(1, 2)))
            for c in range(3, i + 2):
                flip_c = b.draw(0, (1 - Fraction(1, c), Fraction(1, c)))
                coin = b.emit("ite", (b.emit("eq", (count, b.const(c))), flip_c, coin))
            take = b.emit("or", (above, b.emit("and", (tie, coin))))
        idx = b.emit("ite", (take, b.const(i), idx))
        best = b.emit("max", (best, v))
    return idx


def _rewrite(node: Node, args: tuple[int, ...], b: Builder, old: int) -> int | None:
    if node.op != "argmax":
        return None
    return _scan(b, args, node.attr == "uniform")


def lower_argmax(program: Program) -> Program:
    """The same program with every ``argmax`` replaced by a scan (see the module doc)."""
    if not any(n.op == "argmax" for n in program.nodes):
        return program
    nodes, outs = replay(program.nodes, program.outputs, rewrite=_rewrite)
    return Program(
        name=program.name, params=program.params, nodes=tuple(nodes), outputs=tuple(outs),
        tuple_output=program.tuple_output, domain=program.domain,
        neighbours=program.neighbours,
    )
