"""A counter-seeded xoshiro256** generator for numba kernels.

Every chunk of samples gets its own generator state derived from ``(seed, chunk)``
by SplitMix64, so the samples depend on the seed and the chunk size only, never on
how many threads run the chunks.  All arithmetic is on ``uint64`` (mixing signed and
unsigned integers would make numba fall back to floats).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from samplers import numba_cache
from samplers.seed import check_seed

numba_cache.ensure()  # a writable cache for the cache=True functions below (read when each is defined)

_GOLDEN = uint64(0x9E3779B97F4A7C15)
_MIX1 = uint64(0xBF58476D1CE4E5B9)
_MIX2 = uint64(0x94D049BB133111EB)
_MULT5 = uint64(5)
_MULT9 = uint64(9)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True)
def _splitmix(z: uint64) -> uint64:
    z = (z ^ (z >> uint64(30))) * _MIX1
    z = (z ^ (z >> uint64(27))) * _MIX2
    return z ^ (z >> uint64(31))


@njit(cache=True)
def _rotl(x: uint64, k: int) -> uint64:
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True)
def seed_state(seed: uint64, chunk: int) -> tuple:
    """The generator state for one chunk of samples."""
    base = _splitmix(uint64(seed) + _GOLDEN) ^ _splitmix(uint64(chunk) * _GOLDEN + _MIX2)
    s0 = _splitmix(base + _GOLDEN)
    s1 = _splitmix(base + uint64(2) * _GOLDEN)
    s2 = _splitmix(base + uint64(3) * _GOLDEN)
    s3 = _splitmix(base + uint64(4) * _GOLDEN)
    return s0, s1, s2, s3


@njit(cache=True)
def next_u64(s0: uint64, s1: uint64, s2: uint64, s3: uint64) -> tuple:
    """One xoshiro256** step: the new state and a 64-bit output."""
    result = _rotl(s1 * _MULT5, 7) * _MULT9
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return s0, s1, s2, s3, result


@njit(cache=True)
def unit(r: uint64) -> float:
    """A double in [0, 1) from the top 53 bits of ``r``."""
    return float(r >> uint64(11)) * _TO_UNIT


@njit(cache=True)
def categorical(cdf: np.ndarray, off: int, k: int, u: float) -> int:
    """Index of ``u`` in the cumulative table ``cdf[off : off+k-1]`` (inverse CDF).

    The table is non-decreasing, so the index is the number of its entries at most ``u``;
    short tables count them without branching (a search's branches, taken at random, cost
    more than the comparisons).
    """
    if k <= 16:
        i = 0
        for t in range(k - 1):
            i += u >= cdf[off + t]
        return i
    lo, hi = 0, k - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u >= cdf[off + mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Marsaglia and Tsang's 256-layer exponential ziggurat, scaled to 53-bit integers.

    Layer ``i`` accepts ``j * WE[i]`` outright when ``j < KE[i]`` (``j`` a 53-bit integer);
    ``FE`` holds the density at the layer edges for the rejection step.
    """
    m = 2.0**53
    de, ve = 7.697117470131487, 3.949659822581572e-3
    ke, we, fe = np.zeros(256, np.uint64), np.zeros(256), np.zeros(256)
    q = ve / np.exp(-de)
    ke[0], ke[1] = np.uint64((de / q) * m), 0
    we[0], we[255] = q / m, de / m
    fe[0], fe[255] = 1.0, np.exp(-de)
    te = de
    for i in range(254, 0, -1):
        de = -np.log(ve / de + np.exp(-de))
        ke[i + 1] = np.uint64((de / te) * m)
        te = de
        fe[i] = np.exp(-de)
        we[i] = de / m
    return ke, we, fe


ZIG_KE, ZIG_WE, ZIG_FE = _ziggurat_tables()
ZIG_R = 7.697117470131487  # start of the tail


@njit(cache=True)
def standard_exponential(s0: uint64, s1: uint64, s2: uint64, s3: uint64) -> tuple:
    """An Exp(1) draw by the ziggurat (no logarithm on the fast path), and the new state.

    Bits 0-7 of each 64-bit word pick the layer and bits 11-63 the position, so the two
    are independent (the original 32-bit version reused the same low bits for both).
    Also returns bit 8 of the first word, a fair coin the caller may use as a sign.
    """
    s0, s1, s2, s3, r = next_u64(s0, s1, s2, s3)
    sign = (r >> uint64(8)) & uint64(1)
    while True:
        iz = r & uint64(255)
        jz = r >> uint64(11)
        if jz < ZIG_KE[iz]:
            return s0, s1, s2, s3, jz * ZIG_WE[iz], sign
        if iz == 0:
            s0, s1, s2, s3, r = next_u64(s0, s1, s2, s3)
            return s0, s1, s2, s3, ZIG_R - np.log1p(-unit(r)), sign
        x = jz * ZIG_WE[iz]
        s0, s1, s2, s3, r = next_u64(s0, s1, s2, s3)
        if ZIG_FE[iz] + unit(r) * (ZIG_FE[iz - 1] - ZIG_FE[iz]) < np.exp(-x):
            return s0, s1, s2, s3, x, sign
        s0, s1, s2, s3, r = next_u64(s0, s1, s2, s3)


def seed_u64(seed: int) -> np.uint64:
    """A Python seed as the kernel's 64-bit seed (ParameterError outside [0, 2^64))."""
    return np.uint64(check_seed(seed))
