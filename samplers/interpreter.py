"""One numba kernel for every program: the IR lowered to flat arrays and interpreted per sample.

The generated kernel (:mod:`samplers.codegen`) is straight-line code, one statement per IR node:
it runs fastest, but numba compiles it in time superlinear in the program's size (noisy_hist1
at n = 1000: over an hour).  This kernel is compiled once, whatever the program, and its disk
cache does not depend on the program: :func:`lower` turns a program into arrays (one row of
``steps`` per node that is not a constant or an input: opcode, node, the slice of ``args`` it
reads, three integer attributes; ``fparams`` its float attributes) and :func:`kernel` loops over
those rows for every sample.

It computes exactly what the generated kernel computes, so the same seed gives the same bits:
the same random draws in the same order (a draw per noise node and per tie of a uniform argmax,
in node order), the same float64 operations on the same types.  Each node's type is its IR
kind, as numba infers it in the generated code; an operation with a float operand computes in
float64, reading an integer operand converted as numba converts it (``vf`` holds the converted
value of every integer node such an operation reads, so a float operation reads ``vf`` only).

``kernel(steps, fparams, args, init_i, init_f, inputs, outs, outside, x, cdf, n, seed, out_i,
out_f, hist, base, first, stop, step, halt)`` takes the generated kernel's arguments after the
program's arrays, except that ``out`` is two arrays, integer and float (the empty one unused), so one
compiled signature serves every program.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from samplers import numba_cache
from samplers.codegen import CHUNK, cdf_layout, uniform_law
from samplers.counts import program_digits
from samplers.lang.ir import BOTTOM_CODE, FLOAT, Program
from samplers.rng import categorical, next_u64, seed_state, standard_exponential, unit

numba_cache.ensure()  # a writable cache for the cache=True functions below (read when each is defined)

# Opcodes: an operation on integers (_I) or in float64 (_F), chosen by the node's IR kind.
DRAW_UNIFORM, DRAW_CDF, LAPLACE, EXPONENTIAL, GAUSSIAN = 0, 1, 2, 3, 4
ADD_I, ADD_F, SUB_I, SUB_F, MUL_I, MUL_F = 5, 6, 7, 8, 9, 10
NEG_I, NEG_F, ABS_I, ABS_F = 11, 12, 13, 14
MIN_I, MIN_F, MAX_I, MAX_F, CLAMP_I, CLAMP_F = 15, 16, 17, 18, 19, 20
FLOORDIV, MOD, AND, OR, XOR, NOT = 21, 22, 23, 24, 25, 26
LT_I, LT_F, LE_I, LE_F, EQ_I, EQ_F, NE_I, NE_F = 27, 28, 29, 30, 31, 32, 33, 34
ITE_I, ITE_F = 35, 36
ARGMAX_I, ARGMAX_F, ARGMAX_UNIFORM_I, ARGMAX_UNIFORM_F = 37, 38, 39, 40

_TYPED = {"add": ADD_I, "sub": SUB_I, "mul": MUL_I, "neg": NEG_I, "abs": ABS_I, "min": MIN_I, "max": MAX_I,
          "clamp": CLAMP_I, "lt": LT_I, "le": LE_I, "eq": EQ_I, "ne": NE_I, "ite": ITE_I}  # _F is _I + 1
_INT_ONLY = {"floordiv": FLOORDIV, "mod": MOD, "and": AND, "or": OR, "xor": XOR, "not": NOT}
_NOISE = {"laplace": LAPLACE, "exponential": EXPONENTIAL, "gaussian": GAUSSIAN}
# columns of a row of ``steps``
OP, NODE, ARG0, ARG1, P, Q, R, TO_FLOAT = range(8)
# columns of a row of ``outs``: the node, whether it is a float, whether it can be BOTTOM, its digit
O_NODE, O_FLOAT, O_BOTTOM, O_LO, O_RADIX = range(5)


@dataclass(frozen=True)
class Lowered:
    """A program as the interpreter's arrays (see the module docstring)."""

    steps: np.ndarray  # int64 (k, 8): opcode, node, args[ARG0:ARG1], integer attributes P, Q, R, TO_FLOAT
    fparams: np.ndarray  # float64 (k, 2): float attributes
    args: np.ndarray  # int64: the argument nodes of every step, one after the other
    init_i: np.ndarray  # int64 per node: the constants' values (and 0)
    init_f: np.ndarray  # float64 per node: the constants' values as the float operations read them
    inputs: np.ndarray  # int64 (k, 2): node, index into x
    outs: np.ndarray  # int64 (arity, 5): see O_NODE ... O_RADIX
    outside: int  # the histogram slot of outputs outside the digits' ranges

    def arguments(self) -> tuple:
        """The program's part of :func:`kernel`'s arguments."""
        return (self.steps, self.fparams, self.args, self.init_i, self.init_f, self.inputs, self.outs,
                np.int64(self.outside))


def _opcode(program: Program, i: int) -> int:
    n = program.nodes[i]
    if n.op == "draw":
        return DRAW_UNIFORM if uniform_law(n.attr[1]) else DRAW_CDF
    if n.op in _NOISE:
        return _NOISE[n.op]
    if n.op in _INT_ONLY:
        return _INT_ONLY[n.op]
    floats = any(program.nodes[a].kind == FLOAT for a in n.args)
    if n.op == "argmax":
        return (ARGMAX_UNIFORM_I if n.attr == "uniform" else ARGMAX_I) + floats
    if n.op == "ite":  # the branches' type: the condition is an integer
        return ITE_I + (n.kind == FLOAT)
    if n.op == "clamp":
        floats = floats or any(isinstance(b, float) for b in n.attr)
    return _TYPED[n.op] + floats


_READ_AS_FLOATS = frozenset({ADD_F, SUB_F, MUL_F, NEG_F, ABS_F, MIN_F, MAX_F, CLAMP_F, LT_F, LE_F, EQ_F, NE_F,
                             ARGMAX_F, ARGMAX_UNIFORM_F})  # and ITE_F its branches


def _read_as_float(program: Program, codes: dict[int, int]) -> list[bool]:
    """For each node, whether an operation in float64 reads it (an integer node's value is then
    also kept, converted, in ``vf``: its step's TO_FLOAT)."""
    floats = [False] * len(program.nodes)
    for i, code in codes.items():
        args = program.nodes[i].args
        for a in args[1:] if code == ITE_F else args if code in _READ_AS_FLOATS else ():
            floats[a] = True
    return floats


def lower(program: Program) -> Lowered:
    """The interpreter's arrays for ``program`` (the cumulative table is :func:`cdf_layout`'s)."""
    _, offsets = cdf_layout(program)
    codes = {i: _opcode(program, i) for i, n in enumerate(program.nodes) if n.op not in ("const", "input")}
    read_as_float = _read_as_float(program, codes)
    count = len(program.nodes)
    init_i, init_f = np.zeros(count, dtype=np.int64), np.zeros(count)
    steps, fparams, args, inputs = [], [], [], []
    for i, n in enumerate(program.nodes):
        if n.op == "const":
            value = BOTTOM_CODE if n.bottom else n.attr
            if isinstance(value, float):
                init_f[i] = value
            else:
                init_i[i], init_f[i] = value, float(value)
            continue
        if n.op == "input":
            inputs.append((i, n.attr))
            continue
        p = q = t = 0
        fp = fq = 0.0
        if n.op == "draw":
            p, q, t = n.attr[0], len(n.attr[1]), offsets.get(i, 0)  # lo, k, where its cumulative table starts
        elif n.op in _NOISE:
            fp = n.attr
        elif n.op in ("floordiv", "mod"):
            p = n.attr
        elif n.op == "clamp":
            lo, hi = n.attr
            fp, fq = float(lo), float(hi)
            if not any(isinstance(b, float) for b in n.attr):
                p, q = lo, hi
        steps.append((codes[i], i, len(args), len(args) + len(n.args), p, q, t, n.kind != FLOAT and read_as_float[i]))
        fparams.append((fp, fq))
        args.extend(n.args)
    digits = program_digits(program)
    outside = 0 if digits is None else program.output_space  # no histogram without digits
    digits = digits or [(0, 0, False)] * len(program.outputs)
    outs = [(o, program.nodes[o].kind == FLOAT, program.nodes[o].bottom, lo, radix)
            for o, (lo, radix, _) in zip(program.outputs, digits)]
    return Lowered(np.array(steps, dtype=np.int64).reshape(-1, 8), np.array(fparams, dtype=np.float64).reshape(-1, 2),
                   np.array(args, dtype=np.int64), init_i, init_f, np.array(inputs, dtype=np.int64).reshape(-1, 2),
                   np.array(outs, dtype=np.int64).reshape(-1, 5), outside)


@njit(cache=True)
def _argmax(vals, args, a0, a1, uniform, s0, s1, s2, s3):
    """The generated kernel's argmax of ``vals[args[a0:a1]]``: the first maximum, or with ``uniform``
    a draw at each tie keeping the new index with probability 1 / ties; returns it and the state."""
    best, top, ties = 0, vals[args[a0]], 1
    for k in range(1, a1 - a0):
        v = vals[args[a0 + k]]
        if v > top:
            best, top, ties = k, v, 1
        elif uniform and v == top:
            ties += 1
            s0, s1, s2, s3, w = next_u64(s0, s1, s2, s3)
            if unit(w) * ties < 1.0:
                best = k
    return best, s0, s1, s2, s3


@njit(cache=True)
def _sample(steps, fparams, args, cdf, vi, vf, s0, s1, s2, s3):  # noqa: C901 - one branch per opcode
    """Evaluate every step once (one sample) into ``vi``/``vf``; returns the generator state."""
    for r in range(steps.shape[0]):
        op, i, a0, a1 = steps[r, OP], steps[r, NODE], steps[r, ARG0], steps[r, ARG1]
        if op <= GAUSSIAN:
            if op == DRAW_UNIFORM:
                s0, s1, s2, s3, w = next_u64(s0, s1, s2, s3)
                k = steps[r, Q]
                vi[i] = steps[r, P] + min(int(unit(w) * k), k - 1)
            elif op == DRAW_CDF:
                s0, s1, s2, s3, w = next_u64(s0, s1, s2, s3)
                vi[i] = steps[r, P] + categorical(cdf, steps[r, R], steps[r, Q], unit(w))
            elif op == GAUSSIAN:
                s0, s1, s2, s3, w = next_u64(s0, s1, s2, s3)
                u1 = unit(w)
                s0, s1, s2, s3, w = next_u64(s0, s1, s2, s3)
                u2 = unit(w)
                vf[i] = fparams[r, 0] * np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
            else:
                s0, s1, s2, s3, e, sgn = standard_exponential(s0, s1, s2, s3)
                if op == LAPLACE and not sgn:
                    vf[i] = -fparams[r, 0] * e
                else:
                    vf[i] = fparams[r, 0] * e
        elif op <= ABS_F:
            x0 = args[a0]
            if op == ADD_I:
                vi[i] = vi[x0] + vi[args[a0 + 1]]
            elif op == ADD_F:
                vf[i] = vf[x0] + vf[args[a0 + 1]]
            elif op == SUB_I:
                vi[i] = vi[x0] - vi[args[a0 + 1]]
            elif op == SUB_F:
                vf[i] = vf[x0] - vf[args[a0 + 1]]
            elif op == MUL_I:
                vi[i] = vi[x0] * vi[args[a0 + 1]]
            elif op == MUL_F:
                vf[i] = vf[x0] * vf[args[a0 + 1]]
            elif op == NEG_I:
                vi[i] = -vi[x0]
            elif op == NEG_F:
                vf[i] = -vf[x0]
            elif op == ABS_I:
                vi[i] = abs(vi[x0])
            else:
                vf[i] = abs(vf[x0])
        elif op <= MOD:
            x0 = args[a0]
            if op == MIN_I:
                vi[i] = min(vi[x0], vi[args[a0 + 1]])
            elif op == MIN_F:
                vf[i] = min(vf[x0], vf[args[a0 + 1]])
            elif op == MAX_I:
                vi[i] = max(vi[x0], vi[args[a0 + 1]])
            elif op == MAX_F:
                vf[i] = max(vf[x0], vf[args[a0 + 1]])
            elif op == CLAMP_I:
                vi[i] = min(max(vi[x0], steps[r, P]), steps[r, Q])
            elif op == CLAMP_F:
                vf[i] = min(max(vf[x0], fparams[r, 0]), fparams[r, 1])
            elif op == FLOORDIV:
                vi[i] = vi[x0] // steps[r, P]
            else:
                vi[i] = vi[x0] % steps[r, P]
        elif op <= NE_F:
            x0 = args[a0]
            if op == AND:
                vi[i] = vi[x0] & vi[args[a0 + 1]]
            elif op == OR:
                vi[i] = vi[x0] | vi[args[a0 + 1]]
            elif op == XOR:
                vi[i] = vi[x0] ^ vi[args[a0 + 1]]
            elif op == NOT:
                vi[i] = 1 - vi[x0]
            elif op == LT_I:
                vi[i] = 1 if vi[x0] < vi[args[a0 + 1]] else 0
            elif op == LT_F:
                vi[i] = 1 if vf[x0] < vf[args[a0 + 1]] else 0
            elif op == LE_I:
                vi[i] = 1 if vi[x0] <= vi[args[a0 + 1]] else 0
            elif op == LE_F:
                vi[i] = 1 if vf[x0] <= vf[args[a0 + 1]] else 0
            elif op == EQ_I:
                vi[i] = 1 if vi[x0] == vi[args[a0 + 1]] else 0
            elif op == EQ_F:
                vi[i] = 1 if vf[x0] == vf[args[a0 + 1]] else 0
            elif op == NE_I:
                vi[i] = 1 if vi[x0] != vi[args[a0 + 1]] else 0
            else:
                vi[i] = 1 if vf[x0] != vf[args[a0 + 1]] else 0
        elif op == ITE_I:
            vi[i] = vi[args[a0 + 1]] if vi[args[a0]] else vi[args[a0 + 2]]
        elif op == ITE_F:
            vf[i] = vf[args[a0 + 1]] if vi[args[a0]] else vf[args[a0 + 2]]
        elif op == ARGMAX_I or op == ARGMAX_UNIFORM_I:
            vi[i], s0, s1, s2, s3 = _argmax(vi, args, a0, a1, op == ARGMAX_UNIFORM_I, s0, s1, s2, s3)
        else:  # in float64, as numba unifies the generated kernel's running maximum
            vi[i], s0, s1, s2, s3 = _argmax(vf, args, a0, a1, op == ARGMAX_UNIFORM_F, s0, s1, s2, s3)
        if steps[r, TO_FLOAT]:  # an integer a float operation reads
            vf[i] = float(vi[i])
    return s0, s1, s2, s3


@njit(cache=True)
def _store(outs, outside, vi, vf, out_i, out_f, hist, j):
    """Write sample ``j``'s outputs into ``out_i`` or ``out_f``, or count its code in ``hist``."""
    m = outs.shape[0]
    if hist.shape[0] == 0:
        for k in range(m if out_f.shape[0] == 0 else out_f.shape[1]):  # floats: the columns out_f has
            o = outs[k, O_NODE]
            if out_f.shape[0] == 0:
                out_i[j, k] = vi[o]
            elif outs[k, O_FLOAT]:
                out_f[j, k] = np.nan if (outs[k, O_BOTTOM] and vf[o] == BOTTOM_CODE) else vf[o]
            else:
                out_f[j, k] = np.nan if (outs[k, O_BOTTOM] and vi[o] == BOTTOM_CODE) else vi[o]
        return
    code, inside = 0, True  # samplers.codegen's _count_lines
    for k in range(m):
        v, lo, radix = vi[outs[k, O_NODE]], outs[k, O_LO], outs[k, O_RADIX]
        if outs[k, O_BOTTOM]:
            d = 0 if v == BOTTOM_CODE else v - lo
            inside = inside and (v == BOTTOM_CODE or d >= 1) and d < radix
        else:
            d = v - lo
            inside = inside and d >= 0 and d < radix
        code = code * radix + d
    hist[code if inside else outside] += 1


@njit(nogil=True, cache=True)
def kernel(steps, fparams, args, init_i, init_f, inputs, outs, outside, x, cdf, n, seed, out_i, out_f, hist,
           base, first, stop, step, halt):
    """Draw the chunks ``first, first + step, ...`` below ``stop`` (see the module docstring)."""
    vi, vf = init_i.copy(), init_f.copy()
    for r in range(inputs.shape[0]):
        vi[inputs[r, 0]] = x[inputs[r, 1]]
        vf[inputs[r, 0]] = float(x[inputs[r, 1]])
    for c in range(first, stop, step):
        s0, s1, s2, s3 = seed_state(seed, c)
        start = c * CHUNK
        for j in range(start, min(n, start + CHUNK)):
            if halt[0]:
                return
            s0, s1, s2, s3 = _sample(steps, fparams, args, cdf, vi, vf, s0, s1, s2, s3)
            _store(outs, outside, vi, vf, out_i, out_f, hist, j - base)
