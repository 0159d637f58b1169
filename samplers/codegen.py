"""Generate the source of a batched numba kernel from a traced program.

One sample is straight-line code, one local variable per IR node, in the loop of a
function that draws one chunk of samples (or, when long, in a function that loop calls:
see :data:`INLINE_LINES`), each chunk with a generator seeded from ``(seed, chunk index)``
(see :mod:`samplers.rng`).  Discrete noise is drawn by inverse CDF from a table of
cumulative probabilities passed as an argument, so the source depends on the program's
structure and the table on its exact laws.

``kernel(x, cdf, n, seed, out, hist, base, first, stop, step, halt)`` draws the chunks ``first,
first + step, ...`` below ``stop`` (stopping before a sample once ``halt[0]`` is set: a time
limit): sample ``j`` into row ``j - base`` of the array ``out`` (a block of the samples, so a long
run can be drawn block by block; continuous tuple outputs: only the columns ``out`` has, the
first ones) when ``hist`` is empty, else (integer outputs over a small range, see :func:`samplers.counts.program_digits`) adding each sample's
mixed-radix code to the histogram row ``hist``, so no array of samples exists.  It is serial
and releases the GIL (``nogil``): :mod:`samplers.compile` runs one call per thread, each on its
own stride of chunks (and its own histogram row), so the same seed gives the same samples and
counts whatever the number of threads.  No ``prange``: numba names the functions of parallel
loops after the address of an object in the compiling process, so two kernels compiled in
two processes (forked alike) could get one name, and a process that loads both from the disk
cache then ran one kernel's loop with the other's arguments (wrong samples, or a corrupt heap).
The caller allocates both arrays: the kernel allocates nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from samplers.counts import Digit, program_digits
from samplers.lang.ir import BOTTOM, BOTTOM_CODE, FLOAT, Node, Program

CHUNK = 1 << 14  # samples per generator state; fixed so results never depend on threads
# One sample's code up to this many lines sits in the chunk loop; longer, it is a function the loop
# calls.  In the loop it runs faster (noisy max, m = 5: 25% faster), but numba's front end takes
# superlinear time on a loop's body (RAPPOR, m = 10: twice the compile time of the function).
INLINE_LINES = 100

_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
_BY_CONSTANT = {"floordiv": "//", "mod": "%"}
_COMPARE = {"lt": "<", "le": "<=", "eq": "==", "ne": "!="}


@dataclass(frozen=True)
class Kernel:
    """Generated source plus the cumulative-probability table it reads (the source is empty when
    :mod:`samplers.interpreter` runs the program instead).

    ``digits`` (None when the kernel cannot count: float outputs, or a range too wide) give the
    code of each output in the histogram row the kernel fills; its slot ``codes`` counts the
    samples outside the ranges the IR records, which a correct IR never produces.
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


def uniform_law(weights: tuple[Fraction, ...]) -> bool:
    """Whether a draw's law is uniform (drawn by scaling, with no table)."""
    return all(w == weights[0] for w in weights)


def cdf_layout(program: Program) -> tuple[np.ndarray, dict[int, int]]:
    """The cumulative-probability table of the program's draws that are not uniform (the ``k - 1``
    partial sums of each, one after the other, in node order), and where each draw's part starts."""
    table: list[float] = []
    offsets: dict[int, int] = {}
    for i, n in enumerate(program.nodes):
        if n.op == "draw" and not uniform_law(n.attr[1]):
            offsets[i] = len(table)
            acc = Fraction(0)
            for w in n.attr[1][:-1]:
                acc += w
                table.append(float(acc))
    return np.array(table if table else [0.0], dtype=np.float64), offsets


class _Emitter:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.lines: list[str] = []
        self.tables, self.offsets = cdf_layout(program)
        self.tmp = 0

    def fresh(self) -> str:
        self.tmp += 1
        return f"t{self.tmp}"

    def put(self, line: str, indent: int = 0) -> None:
        self.lines.append("    " * indent + line)

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
            self._draw(v, i, n)
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

    def _draw(self, v: str, i: int, n: Node) -> None:
        lo, weights = n.attr
        k = len(weights)
        u = self.draw_u()
        if i not in self.offsets:  # uniform
            self.put(f"{v} = {lo} + min(int({u} * {k}), {k - 1})")
            return
        off = self.offsets[i]
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
from numba import njit
from samplers.rng import categorical, next_u64, seed_state, standard_exponential, unit

BOTTOM = np.int64({bottom})
{body_function}

@njit(cache=True)
def run_chunk(x, cdf, out, hist, start, stop, seed, c, halt):
    s0, s1, s2, s3 = seed_state(seed, c)
    for j in range(start, stop):
        if halt[0]:
            return
{loop}


@njit(nogil=True, cache=True)
def kernel(x, cdf, n, seed, out, hist, base, first, stop, step, halt):
    for c in range(first, stop, step):
        start = c * {chunk}
        run_chunk(x, cdf, out, hist, start - base, min(n, start + {chunk}) - base, seed, c, halt)
'''

_BODY_FUNCTION = '''

@njit(cache=True)
def body(x, cdf, out, hist, j, s0, s1, s2, s3):
{body}
    return s0, s1, s2, s3
'''

def _indent(lines: list[str], levels: int) -> str:
    return "\n".join("    " * levels + line for line in lines)


def _shifted(v: str, lo: int) -> str:
    return f"{v} - {lo}" if lo > 0 else f"{v} + {-lo}" if lo < 0 else v


def _count_lines(program: Program, digits: tuple[Digit, ...]) -> list[str]:
    """Add the sample's code (see :mod:`samplers.counts`) to ``hist``, or count it in the slot
    after the codes when a value lies outside the range its digit covers.  The range tests are
    joined by ``&`` and ``|``, not ``and`` and ``or``: no branch each (numba's front end takes
    time superlinear in the branches of a function)."""
    lines, code, inside = [], "", []
    for k, (o, (lo, radix, bottom)) in enumerate(zip(program.outputs, digits)):
        v, d = f"v{o}", f"d{k}"
        if bottom:  # BOTTOM is digit 0, the values digits 1 .. radix - 1
            lines.append(f"{d} = 0 if {v} == BOTTOM else {_shifted(v, lo)}")
            inside.append(f"(({v} == BOTTOM) | ({d} >= 1)) & ({d} < {radix})")
        else:
            lines.append(f"{d} = {_shifted(v, lo)}")
            inside.append(f"({d} >= 0) & ({d} < {radix})")
        code = d if not code else f"({code}) * {radix} + {d}"
    outside = program.output_space  # the product of the radixes
    return [*lines, f"code = {code}", f"hist[code if {' & '.join(inside)} else {outside}] += 1"]


def generate(program: Program) -> Kernel:
    """The numba kernel source and CDF table for ``program``."""
    em = _Emitter(program)
    for i, n in enumerate(program.nodes):
        em.node(i, n)
    out_float = program.output_kind == FLOAT
    store = []
    guard = out_float and len(program.outputs) > 1  # float tuples: ``out`` may hold only the first columns
    for k, o in enumerate(program.outputs):
        node = program.nodes[o]
        value = f"np.nan if v{o} == BOTTOM else v{o}" if out_float and node.bottom else f"v{o}"
        line = f"out[j, {k}] = {value}"
        store.append(f"if out.shape[1] > {k}: {line}" if guard else line)
    digits = program_digits(program)
    if digits is not None:  # one chunk function for both kernels: an empty histogram means "write out"
        store = ["if hist.shape[0] == 0:", *("    " + line for line in store), "else:",
                 *("    " + line for line in _count_lines(program, tuple(digits)))]
    lines = em.lines + store
    if len(lines) <= INLINE_LINES:
        body_function, loop = "", _indent(lines, 2)
    else:
        body_function = _BODY_FUNCTION.format(body=_indent(lines, 1))
        loop = _indent(["s0, s1, s2, s3 = body(x, cdf, out, hist, j, s0, s1, s2, s3)"], 2)
    source = _TEMPLATE.format(name=program.name, bottom=BOTTOM_CODE, chunk=CHUNK, body_function=body_function,
                              loop=loop)
    return kernel_of(program, source, em.tables)


def kernel_of(program: Program, source: str, tables: np.ndarray) -> Kernel:
    """The :class:`Kernel` of ``program`` with this source and table (its output's shape from the IR)."""
    digits = program_digits(program)
    return Kernel(source, tables, program.output_kind == FLOAT, len(program.outputs),
                  None if digits is None else tuple(digits))
