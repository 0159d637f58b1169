"""An independent reference for the prover's soundness tests: exact output laws of small
programs with one or two continuous draws (Laplace or exponential) and discrete outputs.

One draw ``t``: every program value is affine in ``t`` between the roots of the program's
decisions.  The real line is cut at those roots until, on every piece, evaluating the
program at an interior point (:func:`affine_run`) finds no root inside the piece: then
the same branch is taken on the whole piece and the outputs are constant there.  The
probability of a piece is a difference of the draw's CDF (mpmath, 50 digits).  A uniform
``argmax`` tie between values that are the same affine function of ``t`` has positive
probability: each tied index gets its share.

Two draws: for a fixed first draw the program is a one-draw program in the second, so
``P(o) = int p_1(t_1) P(o | t_1) dt_1`` by mpmath quadrature, split at the roots of the
decisions that read the first draw alone (where ``P(o | t_1)`` jumps) and at the
density's kink.  Numerical, so its ratios carry a small tolerance.

Only the IR's node semantics are shared with the code under test (:func:`evaluate` for
operations on concrete values); nothing from :mod:`verifiers.prover`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import mpmath

from samplers.lang.ir import BOTTOM, Program, evaluate

Affine = tuple[Fraction, Fraction]  # a + b t
SHAPED = {"lt", "le", "eq", "ne", "min", "max", "abs", "clamp", "argmax"}


def _aff(v: Any) -> Affine:
    return v if isinstance(v, tuple) else (Fraction(v), Fraction(0))


def affine_run(program: Program, x: tuple[int, ...], draw: int, t: Fraction,
               fixed: dict[int, Fraction]) -> tuple[list[tuple[Fraction, tuple]], set[Fraction]]:
    """Outputs (with the weights of uniform tie-breaks) at ``t`` of the draw ``draw`` (the other
    draws at ``fixed``), and the roots of every decision taken, as affine functions of ``t``."""
    roots: set[Fraction] = set()
    results: list[tuple[Fraction, tuple]] = []

    def go(i: int, vals: list[Any], weight: Fraction) -> None:
        while i < len(program.nodes):
            n = program.nodes[i]
            args = [vals[a] for a in n.args]
            if n.op == "input":
                v: Any = Fraction(x[n.attr])
            elif i == draw:
                v = (Fraction(0), Fraction(1))
            elif i in fixed:
                v = fixed[i]
            elif n.op == "const":
                v = n.attr if n.attr is BOTTOM else Fraction(n.attr)
            elif n.op in ("draw", "geom", "gaussian", "laplace", "exponential"):
                raise ValueError(f"the reference handles the given draws only, not {n.op} at %{i}")
            elif n.op == "ite":
                v = args[1] if _at(args[0], t) else args[2]
            elif any(isinstance(a, tuple) for a in args):
                if n.op in SHAPED:
                    forms = [_aff(a) for a in args]
                    pairs = list(itertools.combinations(forms, 2)) + (
                        [(forms[0], _aff(Fraction(b))) for b in n.attr] if n.op == "clamp" else []) + (
                        [(forms[0], _aff(Fraction(0)))] if n.op == "abs" else [])
                    for (a0, b0), (a1, b1) in pairs:
                        if b0 != b1:
                            roots.add((a1 - a0) / (b0 - b1))
                    conc = [_at(f, t) for f in forms]
                    if n.op == "argmax":
                        top = max(conc)
                        tied = [k for k, c in enumerate(conc) if c == top]
                        if n.attr == "uniform" and len(tied) > 1:
                            for k in tied:  # ties of identical affine functions: positive probability
                                go(i + 1, vals + [Fraction(k)], weight / len(tied))
                            return
                        v = Fraction(tied[0])
                    elif n.op in ("lt", "le", "eq", "ne"):
                        v = Fraction(evaluate(n.op, n.attr, conc))
                    elif n.op == "min":
                        v = forms[0] if conc[0] <= conc[1] else forms[1]
                    elif n.op == "max":
                        v = forms[0] if conc[0] >= conc[1] else forms[1]
                    elif n.op == "abs":
                        v = forms[0] if conc[0] >= 0 else (-forms[0][0], -forms[0][1])
                    else:
                        lo, hi = (Fraction(b) for b in n.attr)
                        v = _aff(lo) if conc[0] < lo else _aff(hi) if conc[0] > hi else forms[0]
                elif n.op in ("add", "sub"):
                    (a0, b0), (a1, b1) = _aff(args[0]), _aff(args[1])
                    v = (a0 + a1, b0 + b1) if n.op == "add" else (a0 - a1, b0 - b1)
                elif n.op == "neg":
                    v = (-args[0][0], -args[0][1])
                elif n.op == "mul":
                    (a0, b0), (a1, b1) = _aff(args[0]), _aff(args[1])
                    if b0 and b1:
                        raise ValueError("a product of two noisy values")
                    v = (a0 * a1, a0 * b1 + a1 * b0)
                else:
                    raise ValueError(f"{n.op} of a noisy value")
            else:
                if n.op == "argmax" and n.attr == "uniform":
                    top = max(args)
                    tied = [k for k, c in enumerate(args) if c == top]
                    if len(tied) > 1:
                        for k in tied:
                            go(i + 1, vals + [Fraction(k)], weight / len(tied))
                        return
                out = evaluate(n.op, n.attr, args)
                v = out if out is BOTTOM else Fraction(out)
            vals = vals + [v]
            i += 1
        outs = tuple(vals[o] for o in program.outputs)
        if any(isinstance(o, tuple) for o in outs):
            raise ValueError("an output is a noisy value: the reference handles discrete outputs only")
        results.append((weight, outs))

    go(0, [], Fraction(1))
    return results, roots


def _at(v: Any, t: Fraction) -> Any:
    return v[0] + v[1] * t if isinstance(v, tuple) else v


def _cdf(law: str, scale: Fraction, t: Any) -> Any:
    b = mpmath.mpf(scale.numerator) / scale.denominator
    if t == mpmath.inf:
        return mpmath.mpf(1)
    if t == -mpmath.inf:
        return mpmath.mpf(0)
    t = mpmath.mpf(t.numerator) / t.denominator if isinstance(t, Fraction) else mpmath.mpf(t)
    if law == "exponential":
        return mpmath.mpf(0) if t <= 0 else 1 - mpmath.exp(-t / b)
    return mpmath.exp(t / b) / 2 if t < 0 else 1 - mpmath.exp(-t / b) / 2


def _interior(lo: Any, hi: Any) -> Fraction:
    if lo is None and hi is None:
        return Fraction(0)
    if lo is None:
        return hi - 1
    if hi is None:
        return lo + 1
    return (lo + hi) / 2


def one_draw_law(program: Program, x: tuple[int, ...], draw: int, law: tuple[str, Fraction],
                 fixed: dict[int, Fraction] | None = None) -> dict[tuple, Any]:
    """``P(outputs | x)`` over the draw ``draw`` (the other draws at ``fixed``), exactly up to mpmath."""
    fixed = fixed or {}
    cuts: set[Fraction] = {Fraction(0)} if law[0] == "exponential" else set()
    while True:
        edges: list[Any] = [None, *sorted(cuts), None]
        pieces = []
        new: set[Fraction] = set()
        for lo, hi in zip(edges, edges[1:]):
            res, roots = affine_run(program, x, draw, _interior(lo, hi), fixed)
            new |= {r for r in roots if (lo is None or r > lo) and (hi is None or r < hi)}
            pieces.append((lo, hi, res))
        if not new:
            break
        cuts |= new
    out: dict[tuple, Any] = {}
    with mpmath.workdps(50):
        for lo, hi, res in pieces:
            p = _cdf(law[0], law[1], mpmath.inf if hi is None else hi) - _cdf(law[0], law[1], -mpmath.inf if lo is None else lo)
            for w, o in res:
                out[o] = out.get(o, mpmath.mpf(0)) + p * (mpmath.mpf(w.numerator) / w.denominator)
    return out


def two_draw_law(program: Program, x: tuple[int, ...], draws: list[int],
                 laws: list[tuple[str, Fraction]]) -> dict[tuple, Any]:
    """``P(outputs | x)`` over two draws: the first by quadrature, the second exactly."""
    first, second = draws
    (law1, b1) = laws[0]

    def inner(t1: Any) -> dict[tuple, Any]:
        return one_draw_law(program, x, second, laws[1], {first: (Fraction(t1), Fraction(0))})

    # where P(o | t1) may jump: roots of decisions on the first draw alone, found along a grid
    jumps: set[Fraction] = {Fraction(0)}
    for k in range(-40, 41):
        probe = Fraction(k, 4) * b1
        for t2 in (Fraction(-1000), Fraction(0), Fraction(1000)):
            _, roots = affine_run(program, x, first, probe, {second: (t2, Fraction(0))})
            jumps |= {r for r in roots if abs(r) < 1000}
    width = 60 * b1
    points = sorted(p for p in jumps | {-width, width} if -width <= p <= width)
    if law1 == "exponential":
        points = [p for p in points if p >= 0]
    mesh = [mpmath.mpf(p.numerator) / p.denominator for p in points]
    outs: set[tuple] = set()
    for p in points:
        outs |= set(inner(p + Fraction(1, 7)))
    total: dict[tuple, Any] = {}
    b = mpmath.mpf(b1.numerator) / b1.denominator
    with mpmath.workdps(20):
        def density(t: Any) -> Any:
            return mpmath.exp(-t / b) / b if law1 == "exponential" else mpmath.exp(-abs(t) / b) / (2 * b)

        for o in outs:
            def f(t: Any, o=o) -> Any:
                q = inner(Fraction(float(t)))
                return density(t) * q.get(o, 0)

            total[o] = sum(mpmath.quad(f, [lo, hi]) for lo, hi in zip(mesh, mesh[1:]))
    return total
