"""MurmurHash3 (32-bit, x86 variant), as RAPPOR's Bloom filter hashes its input strings.

Written from Austin Appleby's public-domain specification; returns the signed value
that the ``mmh3`` package's ``hash`` returns, so Bloom bits match DP-Sniper's.
"""

from __future__ import annotations

_M = 0xFFFFFFFF
_C1, _C2 = 0xCC9E2D51, 0x1B873593


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M


def _mix_key(k: int) -> int:
    return (_rotl((k * _C1) & _M, 15) * _C2) & _M


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """The signed 32-bit MurmurHash3 of ``data``."""
    h = seed & _M
    n = len(data)
    body = n - n % 4
    for i in range(0, body, 4):
        h ^= _mix_key(int.from_bytes(data[i:i + 4], "little"))
        h = (_rotl(h, 13) * 5 + 0xE6546B64) & _M
    tail = data[body:]
    if tail:
        h ^= _mix_key(int.from_bytes(tail, "little"))
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h
