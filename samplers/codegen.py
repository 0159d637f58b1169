"""Generate the source of a batched numba kernel from a traced program.

One sample is straight-line code, one local variable per IR node, in the loop of a
function that draws one chunk of samples; the kernels run chunks in parallel
(``prange``), each with a generator seeded from ``(seed, chunk index)`` (see
:mod:`samplers.rng`).  Keeping the chunk loop out of the ``prange`` loop keeps numba's
parallel passes, which copy the loop they transform, from growing quadratically with
the size of the mechanism.  Discrete noise is drawn by inverse CDF from a table of
cumulative probabilities passed as an argument, so the source depends on the program's
structure and the table on its exact laws.

Two kernels share the chunk function: ``kernel`` writes every sample into an array;
``count_kernel`` (integer outputs over a small range, see :func:`samplers.counts.program_digits`)
adds each sample's mixed-radix code to a histogram instead, one histogram row per block of
chunks, so no array of samples exists (it draws chunks ``first .. stop-1``, so a long run can
be cut into pieces).  Both draw the same stream: for the same seed the histogram counts
exactly the samples the array holds, whatever the number of threads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from samplers.counts import Digit, program_digits
from samplers.lang.ir import BOTTOM, BOTTOM_CODE, FLOAT, Node, Program

CHUNK = 1 << 14  # samples per generator state; fixed so results never depend on threads

_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
_BY_CONSTANT = {"floordiv": "//", "mod": "%"}
_COMPARE = {"lt": "<", "le": "<=", "eq": "==", "ne": "!="}


@dataclass(frozen=True)
class Kernel:
    """Generated source plus the cumulative-probability table it reads.

    ``digits`` (None when the source has no ``count_kernel``) give the code of each output
    in the histogram the counting kernel fills; its slot ``codes`` counts the samples outside
    the ranges the IR records, which a correct IR never produces.
    """

    source: str
    tables: np.ndarray
    output_float: bool
    arity: int
    digits: tuple[Digit, ...] | None

    @property
    def codes(self) -> int:
        """Number of output codes (the histogram's slots before the out-of-range one)."""
        assert self.digits is not None
        return math.prod(r for _, r, _ in self.digits)


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
        self.lines.append("        " + "    " * indent + line)

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
def run_chunk(x, cdf, out, hist, start, stop, seed, c):
    s0, s1, s2, s3 = seed_state(seed, c)
    for j in range(start, stop):
{body}
{store}


@njit(parallel=True, cache=True)
def kernel(x, cdf, n, seed, out):
    hist = np.zeros(0, np.int64)
    nchunks = (n + {chunk} - 1) // {chunk}
    for c in prange(nchunks):
        start = c * {chunk}
        run_chunk(x, cdf, out, hist, start, min(n, start + {chunk}), seed, c)
'''

_COUNT_TEMPLATE = '''

@njit(parallel=True, cache=True)
def count_kernel(x, cdf, n, seed, hist, first, stop):
    out = np.zeros((0, {arity}), np.int64)
    nblocks = hist.shape[0]
    for b in prange(nblocks):
        for c in range(first + b, stop, nblocks):
            start = c * {chunk}
            run_chunk(x, cdf, out, hist[b], start, min(n, start + {chunk}), seed, c)
'''


def _shifted(v: str, lo: int) -> str:
    return f"{v} - {lo}" if lo > 0 else f"{v} + {-lo}" if lo < 0 else v


def _count_lines(program: Program, digits: tuple[Digit, ...]) -> list[str]:
    """Add the sample's code (see :mod:`samplers.counts`) to ``hist``, or count it in the slot
    after the codes when a value lies outside the range its digit covers."""
    code, ok = "", []
    for o, (lo, radix, bottom) in zip(program.outputs, digits):
        v = f"v{o}"
        first = lo + bottom  # the value of the first digit that is not BOTTOM
        inside = f"{first} <= {v} <= {lo + radix - 1}"
        if bottom:
            d, inside = f"(0 if {v} == BOTTOM else {_shifted(v, lo)})", f"({v} == BOTTOM or {inside})"
        else:
            d = _shifted(v, lo)
        code = d if not code else f"({code}) * {radix} + {d}"
        ok.append(inside)
    outside = math.prod(r for _, r, _ in digits)
    return [f"code = {code}", f"hist[code if {' and '.join(ok)} else {outside}] += 1"]


def generate(program: Program) -> Kernel:
    """The numba kernel source and CDF table for ``program``."""
    em = _Emitter(program)
    for i, n in enumerate(program.nodes):
        em.node(i, n)
    out_float = program.output_kind == FLOAT
    store = []
    for k, o in enumerate(program.outputs):
        node = program.nodes[o]
        if out_float and node.bottom:
            store.append(f"out[j, {k}] = np.nan if v{o} == BOTTOM else v{o}")
        else:
            store.append(f"out[j, {k}] = v{o}")
    digits = program_digits(program)
    if digits is not None:  # one chunk function for both kernels: an empty histogram means "write out"
        store = ["if hist.shape[0] == 0:", *("    " + line for line in store), "else:",
                 *("    " + line for line in _count_lines(program, tuple(digits)))]
    source = _TEMPLATE.format(name=program.name, bottom=BOTTOM_CODE, chunk=CHUNK, body="\n".join(em.lines),
                              store="\n".join("        " + line for line in store))
    if digits is not None:
        source += _COUNT_TEMPLATE.format(arity=len(program.outputs), chunk=CHUNK)
    tables = np.array(em.table if em.table else [0.0], dtype=np.float64)
    return Kernel(source, tables, out_float, len(program.outputs), None if digits is None else tuple(digits))
