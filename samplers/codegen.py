"""Generate the source of a batched numba kernel from a traced program.

One sample is straight-line code, one local variable per IR node, in a function of its
own; the kernel calls it in a loop over the samples of a chunk, and chunks run in
parallel (``prange``), each with a generator seeded from ``(seed, chunk index)`` (see
:mod:`samplers.rng`).  Keeping the body out of the ``prange`` loop keeps numba's
parallel passes, which copy the loop they transform, from growing quadratically with
the size of the mechanism.  Discrete noise is drawn
by inverse CDF from a table of cumulative probabilities passed as an argument, so the
source depends on the program's structure and the table on its exact laws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from samplers.lang.ir import BOTTOM, BOTTOM_CODE, FLOAT, Node, Program

CHUNK = 1 << 14  # samples per generator state; fixed so results never depend on threads

_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
_BY_CONSTANT = {"floordiv": "//", "mod": "%"}
_COMPARE = {"lt": "<", "le": "<=", "eq": "==", "ne": "!="}


@dataclass(frozen=True)
class Kernel:
    """Generated source plus the cumulative-probability table it reads."""

    source: str
    tables: np.ndarray
    output_float: bool
    arity: int


def _literal(v: object) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "np.inf" if v > 0 else "-np.inf"
        return repr(v)
    if v is BOTTOM:
        return "BOTTOM"
    return str(int(v))  # type: ignore[arg-type]


class _Emitter:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.lines: list[str] = []
        self.table: list[float] = []
        self.tmp = 0

    def fresh(self) -> str:
        self.tmp += 1
        return f"t{self.tmp}"

    def put(self, line: str, indent: int = 0) -> None:
        self.lines.append("    " + "    " * indent + line)

    def draw_u(self, indent: int = 0) -> str:
        u = self.fresh()
        self.put("s0, s1, s2, s3, r = next_u64(s0, s1, s2, s3)", indent)
        self.put(f"{u} = unit(r)", indent)
        return u

    def node(self, i: int, n: Node) -> None:
        v = f"v{i}"
        a = [f"v{j}" for j in n.args]
        op = n.op
        if op == "const":
            self.put(f"{v} = {_literal(n.attr)}")
        elif op == "input":
            self.put(f"{v} = x[{n.attr}]")
        elif op == "draw":
            self._draw(v, n)
        elif op == "laplace":  # a fair sign times an exponential
            self.put(f"s0, s1, s2, s3, {v}, sgn = standard_exponential(s0, s1, s2, s3)")
            self.put(f"{v} = {n.attr!r} * {v} if sgn else -{n.attr!r} * {v}")
        elif op == "exponential":
            self.put(f"s0, s1, s2, s3, {v}, sgn = standard_exponential(s0, s1, s2, s3)")
            self.put(f"{v} = {n.attr!r} * {v}")
        elif op == "gaussian":
            u1, u2 = self.draw_u(), self.draw_u()
            self.put(f"{v} = {n.attr!r} * np.sqrt(-2.0 * np.log1p(-{u1})) * np.cos(2.0 * np.pi * {u2})")
        elif op in _INFIX:
            self.put(f"{v} = {a[0]} {_INFIX[op]} {a[1]}")
        elif op in _BY_CONSTANT:
            self.put(f"{v} = {a[0]} {_BY_CONSTANT[op]} {n.attr}")
        elif op in _COMPARE:
            self.put(f"{v} = 1 if {a[0]} {_COMPARE[op]} {a[1]} else 0")
        elif op == "neg":
            self.put(f"{v} = -{a[0]}")
        elif op == "abs":
            self.put(f"{v} = abs({a[0]})")
        elif op == "not":
            self.put(f"{v} = 1 - {a[0]}")
        elif op in ("min", "max"):
            self.put(f"{v} = {op}({a[0]}, {a[1]})")
        elif op == "clamp":
            lo, hi = n.attr
            self.put(f"{v} = min(max({a[0]}, {_literal(lo)}), {_literal(hi)})")
        elif op == "ite":
            conv = "float" if n.kind == FLOAT else ""
            self.put(f"{v} = {conv}({a[1]}) if {a[0]} else {conv}({a[2]})")
        elif op == "argmax":
            self._argmax(v, a, n.attr == "uniform")
        else:  # pragma: no cover - the builder admits no other op
            raise AssertionError(f"no code for {op}")

    def _draw(self, v: str, n: Node) -> None:
        lo, weights = n.attr
        k = len(weights)
        u = self.draw_u()
        if all(w == weights[0] for w in weights):
            self.put(f"{v} = {lo} + min(int({u} * {k}), {k - 1})")
            return
        off = len(self.table)
        acc = Fraction(0)
        for w in weights[:-1]:
            acc += w
            self.table.append(float(acc))
        if k == 2:
            self.put(f"{v} = {lo} + (1 if {u} >= cdf[{off}] else 0)")
        else:
            self.put(f"{v} = {lo} + categorical(cdf, {off}, {k}, {u})")

    def _argmax(self, v: str, a: list[str], uniform: bool) -> None:
        bi, bv, cnt = self.fresh(), self.fresh(), self.fresh()
        self.put(f"{bi} = 0")
        self.put(f"{bv} = {a[0]}")
        if uniform:
            self.put(f"{cnt} = 1")
        for k, arg in enumerate(a[1:], start=1):
            self.put(f"if {arg} > {bv}:")
            self.put(f"{bi} = {k}", 1)
            self.put(f"{bv} = {arg}", 1)
            if uniform:
                self.put(f"{cnt} = 1", 1)
                self.put(f"elif {arg} == {bv}:")
                self.put(f"{cnt} += 1", 1)
                u = self.draw_u(1)
                self.put(f"if {u} * {cnt} < 1.0:", 1)
                self.put(f"{bi} = {k}", 2)
        self.put(f"{v} = {bi}")


_TEMPLATE = '''\
# Generated by dphybrid from mechanism {name!r}; do not edit.
import numpy as np
from numba import njit, prange
from samplers.rng import categorical, next_u64, seed_state, standard_exponential, unit

BOTTOM = np.int64({bottom})


@njit(cache=True)
def body(x, cdf, out, j, s0, s1, s2, s3):
{body}
    return s0, s1, s2, s3


@njit(parallel=True, cache=True)
def kernel(x, cdf, n, seed, out):
    nchunks = (n + {chunk} - 1) // {chunk}
    for c in prange(nchunks):
        s0, s1, s2, s3 = seed_state(seed, c)
        start = c * {chunk}
        stop = min(n, start + {chunk})
        for j in range(start, stop):
            s0, s1, s2, s3 = body(x, cdf, out, j, s0, s1, s2, s3)
'''


def generate(program: Program) -> Kernel:
    """The numba kernel source and CDF table for ``program``."""
    em = _Emitter(program)
    for i, n in enumerate(program.nodes):
        em.node(i, n)
    out_float = program.output_kind == FLOAT
    for k, o in enumerate(program.outputs):
        node = program.nodes[o]
        if out_float and node.bottom:
            em.put(f"out[j, {k}] = np.nan if v{o} == BOTTOM else v{o}")
        else:
            em.put(f"out[j, {k}] = v{o}")
    source = _TEMPLATE.format(
        name=program.name, bottom=BOTTOM_CODE, chunk=CHUNK, body="\n".join(em.lines)
    )
    tables = np.array(em.table if em.table else [0.0], dtype=np.float64)
    return Kernel(source, tables, out_float, len(program.outputs))
