"""Which traced programs the float-level audit reads, and how: outputs as monotone maps of one draw.

The audit handles a program whose (single) output is, on every run, the value of one of a few
*chains*: a continuous noise node followed by float64 operations whose other operands are
noise-free (``add``, ``sub``, ``mul``, ``neg``, ``min``, ``max``, ``clamp``: each monotone in the
noisy operand, as correctly rounded arithmetic is), possibly selected by ``ite`` or by ``max``/``min``
of two noisy values (report-noisy-max releasing the noisy value).  A noise-free value that may be
selected is a *fixed* candidate.  Anything else (a noisy comparison released as the output, ``abs``,
discrete draws, tuples) raises :class:`NotModelled` with the reason, which the audit reports.

The IR is read as float64 operations in the order traced; a zero output is never a target (the
audit compares outputs by value, and ``loc + laplace(0, s)`` differs from ``laplace(loc, s)`` only in
the sign of a zero).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from samplers.lang.ir import CONTINUOUS_NOISE, RANDOM_OPS, Program, evaluate

MONOTONE = frozenset({"add", "sub", "mul", "neg", "min", "max", "clamp"})


class NotModelled(Exception):
    """The program is outside what the float-level audit models (the message says what)."""


@dataclass(frozen=True)
class Chain:
    """A noise node (None for a fixed, noise-free candidate) and the node ids of the steps above it."""

    noise: int | None
    steps: tuple[int, ...]
    top: int


def _deps(program: Program) -> list[frozenset[int]]:
    out: list[frozenset[int]] = []
    for i, n in enumerate(program.nodes):
        own = frozenset({i}) if n.op in RANDOM_OPS else frozenset()
        out.append(own.union(*(out[a] for a in n.args)))
    return out


def candidates(program: Program) -> list[Chain]:
    """The chains whose value the output takes (see the module docstring), or :class:`NotModelled`."""
    if program.arity != 1:
        raise NotModelled("a tuple output (the audit reads one released value)")
    deps = _deps(program)
    nodes = program.nodes
    discrete = [i for i in deps[program.outputs[0]] if nodes[i].op not in CONTINUOUS_NOISE]
    if discrete:
        raise NotModelled(f"a discrete draw ({nodes[discrete[0]].op}) reaches the output")

    def walk(i: int) -> list[Chain]:
        n = nodes[i]
        if not deps[i]:
            return [Chain(None, (), i)]
        if n.op in CONTINUOUS_NOISE:
            return [Chain(i, (), i)]
        noisy = [a for a in n.args if deps[a]]
        if n.op == "ite":  # the value is one of the branches, whatever decides
            return walk(n.args[1]) + walk(n.args[2])
        if n.op in ("min", "max") and len(noisy) == 2:
            return walk(n.args[0]) + walk(n.args[1])
        if n.op in MONOTONE and len(noisy) == 1:
            return [Chain(c.noise, c.steps + (i,), i) if c.noise is not None else c for c in walk(noisy[0])]
        what = "a comparison of noisy values" if n.op in ("lt", "le", "eq", "ne", "argmax") else f"{n.op}"
        raise NotModelled(f"{what} on noisy values (node %{i}) decides the released value")

    if nodes[program.outputs[0]].kind != "float":
        raise NotModelled("the output is not a noisy float64 value (an index or a decision derived from "
                          "comparisons of noisy values): its float64 law is not modelled")
    return walk(program.outputs[0])


def fixed_values(program: Program, x: Sequence[Any]) -> dict[int, Any]:
    """The values of the noise-free nodes on input ``x`` (float64 arithmetic, as numpy computes)."""
    deps = _deps(program)
    vals: dict[int, Any] = {}
    for i, n in enumerate(program.nodes):
        if deps[i]:
            continue
        vals[i] = x[n.attr] if n.op == "input" else evaluate(n.op, n.attr, [vals[a] for a in n.args])
        _check_double(vals[i], i)
    return vals


def _check_double(v: Any, i: int) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or isinstance(v, int) and abs(v) > 2**53:
        raise NotModelled(f"node %{i} holds {v!r}, not a float64 or a small integer")


@dataclass(frozen=True)
class OutputMap:
    """Output = ``g(noise value)`` along a chain on one input; ``increasing`` (else non-increasing);
    ``key``: equal keys are equal maps (same sampler, same steps, same operands)."""

    g: Callable[[float], float]
    increasing: bool
    key: tuple


def output_map(program: Program, chain: Chain, fixed: dict[int, Any]) -> OutputMap:
    """The chain's output map on the input ``fixed`` was computed for (:func:`fixed_values`)."""
    nodes = program.nodes
    increasing = True
    plan = []
    below = chain.noise
    for i in chain.steps:
        n = nodes[i]
        pos = n.args.index(below)
        others = tuple(fixed[a] for a in n.args if a != below)
        if any(isinstance(v, float) and not math.isfinite(v) for v in others):
            raise NotModelled(f"node %{i} combines a noisy value with a non-finite one")
        if n.op == "neg" or n.op == "sub" and pos == 1 or n.op == "mul" and others[0] < 0:
            increasing = not increasing
        plan.append((n.op, n.attr, pos, others))
        below = i

    def g(v: float) -> float:
        for op, attr, pos, others in plan:
            args = list(others)
            args.insert(pos, v)
            v = evaluate(op, attr, args)
        return v

    noise = nodes[chain.noise]
    return OutputMap(g, increasing, (noise.op, noise.attr, tuple(plan)))


def run(program: Program, x: Sequence[Any], noise: dict[int, float]) -> Any:
    """The program's output on input ``x`` with the noise nodes set to the given doubles."""
    vals: list[Any] = []
    for n in program.nodes:
        if n.op in RANDOM_OPS:
            vals.append(noise.get(len(vals), 0))  # a draw that does not reach the output: any value
        elif n.op == "input":
            vals.append(x[n.attr])
        else:
            vals.append(evaluate(n.op, n.attr, [vals[a] for a in n.args]))
    return vals[program.outputs[0]]
