"""Turn sampler outputs into per-output counts (outputs as the exact backends key them).

Integer outputs over a small range are counted by a mixed-radix code: one digit per
output component, digit 0 standing for BOTTOM when the component can be BOTTOM, codes
ascending in the lexicographic order of the outputs.  The digits come either from the
samples (:func:`output_counts`, counting an array with ``np.bincount``) or from the
value ranges the IR records (:func:`program_digits`, for the sampler's fused kernel
that counts while it draws); :func:`decode_counts` reads both kinds of table back.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from samplers.lang.ir import BOTTOM_CODE, FLOAT, Program, from_code

MAX_CODES = 1 << 24  # the largest table np.bincount may fill (8 bytes a code)

Digit = tuple[int, int, bool]  # (the value of digit 0, or of digit 1 when BOTTOM is digit 0; radix; has BOTTOM)


def output_counts(samples: np.ndarray) -> dict[Any, int]:
    """Counts of each distinct output of an integer sample array (rows are tuple outputs), in
    lexicographic order (BOTTOM first).

    Outputs over a small range are counted with ``np.bincount`` of a mixed-radix code (one
    digit per column, BOTTOM its own digit): linear passes, no sort.  Wider ranges fall back
    to grouping rows with a lexicographic sort (``np.lexsort``).
    """
    if samples.dtype.kind == "f":
        raise ValueError("counts per output need discrete (integer) samples")
    cols = samples.reshape(len(samples), -1) if len(samples) else samples
    if len(samples) and cols.shape[1]:
        coded = _mixed_radix(cols)
        if coded is not None:
            code, digits = coded
            return decode_counts(np.bincount(code), digits, rows=samples.ndim == 2)
    if samples.ndim == 1:
        vals, counts = np.unique(samples, return_counts=True)
        return {from_code(v): int(c) for v, c in zip(vals, counts)}
    rows = samples[np.lexsort(samples.T[::-1])] if samples.shape[1] else samples
    starts = np.flatnonzero(np.r_[len(rows) > 0, (rows[1:] != rows[:-1]).any(axis=1)])
    counts = np.diff(np.r_[starts, len(rows)])
    return {tuple(from_code(v) for v in rows[i]): int(c) for i, c in zip(starts, counts)}


def program_digits(program: Program) -> list[Digit] | None:
    """The digits of ``program``'s outputs from the value ranges its IR records (None for
    continuous outputs or more than ``MAX_CODES`` codes): every output the program can
    produce has a code below the product of the radixes."""
    if program.output_kind == FLOAT:
        return None
    digits = []
    for node in program.output_nodes():
        lo = int(node.lo) - node.bottom
        digits.append((lo, node.width() + node.bottom, node.bottom))
    return digits if program.output_space <= MAX_CODES else None


def decode_counts(counts: np.ndarray, digits: Sequence[Digit], rows: bool) -> dict[Any, int]:
    """The outputs with a non-zero count in ``counts`` (indexed by code), in code order, with their
    counts; an output is a tuple when ``rows``, else a single value."""
    decode = _decoder(digits, rows)
    return {decode(int(k)): int(counts[k]) for k in np.flatnonzero(counts)}


def _decoder(digits: Sequence[Digit], rows: bool) -> Callable[[int], Any]:
    def decode(c: int) -> Any:
        out = []
        for lo, radix, bottom in reversed(digits):
            c, d = divmod(c, radix)
            out.append(from_code(BOTTOM_CODE) if bottom and d == 0 else lo + d)
        return tuple(reversed(out)) if rows else out[0]

    return decode


def _mixed_radix(cols: np.ndarray) -> tuple[np.ndarray, list[Digit]] | None:
    """Each row's code ``sum digit_j * radix_j`` (ascending codes: lexicographic rows) and the
    digits, from the values the columns hold; None when there would be more than ``MAX_CODES``
    codes."""
    digits: list[Digit] = []
    size = 1
    for j in range(cols.shape[1]):
        col = cols[:, j]
        lo, hi = int(col.min()), int(col.max())
        bottom = lo == BOTTOM_CODE
        if bottom:  # BOTTOM is digit 0, the values follow
            rest = col[col != BOTTOM_CODE]
            lo, hi = (int(rest.min()), int(rest.max())) if len(rest) else (0, -1)
            lo -= 1
        elif 0 <= lo:  # non-negative values are their own digits: no shifted copy
            lo = 0
        radix = hi - lo + 1
        size *= radix
        if size > MAX_CODES:
            return None
        digits.append((lo, radix, bottom))
    code = None
    for j, (lo, radix, bottom) in enumerate(digits):
        col = cols[:, j]
        if bottom:
            d = np.where(col == BOTTOM_CODE, 0, col - lo)
        else:
            d = col - lo if lo else col  # the samples themselves when no shift is needed (never written)
        code = d if code is None else code * radix + d
    assert code is not None
    return code, digits
