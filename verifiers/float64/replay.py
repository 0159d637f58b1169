"""Replaying a witness with numpy itself: a PCG64 state whose next 64-bit output is a chosen word.

PCG64 (XSL-RR 128/64, numpy/random/src/pcg64/pcg64.h) first steps its 128-bit LCG,
``state = state * M + inc``, then outputs ``rotr64(hi ^ lo, hi >> 58)`` of the new state.  Given a
word ``w``, any ``hi`` fixes the rotation, ``lo = rotl64(w, rot) ^ hi`` makes the output ``w``, and
the state to install is the predecessor ``(new - inc) * M^-1``.  :func:`replay_generator` stands in
for ``prng``: its n-th sampler call runs numpy's own ``Generator`` method on a fresh PCG64 set to
give the n-th word, so a user's function can be re-run on the witnessed draws unchanged.

Legacy ``RandomState`` (MT19937) is set the same way for a library that draws from one:
``random()`` reads two tempered 32-bit outputs ``a``, ``b`` of the state's key array from position
``pos`` on (no twist before ``pos`` reaches 624), and returns ``((a >> 5) 2^26 + (b >> 6)) / 2^53``;
:func:`mt19937_state` puts the untempered words for chosen ``k`` at the head of the key, ``pos = 0``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645
MASK64 = (1 << 64) - 1
MASK128 = (1 << 128) - 1
INCREMENT = 0xDA3E39CB94B95BDB  # any odd increment works; this is PCG's default stream's


def _rotl64(w: int, r: int) -> int:
    r &= 63
    return ((w << r) | (w >> (64 - r))) & MASK64 if r else w


def _untemper(y: int) -> int:
    """The MT19937 key word that tempers to ``y`` (each tempering step inverted, last first)."""
    y ^= y >> 18  # each of these two steps is its own inverse
    y ^= (y << 15) & 0xEFC60000
    x = y
    for _ in range(5):  # y = x ^ ((x << 7) & B): x recovered 7 more bits at a time
        x = (y ^ ((x << 7) & 0x9D2C5680)) & 0xFFFFFFFF
    z = x
    for _ in range(3):  # x = z ^ (z >> 11): 11 more bits at a time
        z = x ^ (z >> 11)
    return z


def mt19937_state(ks: Sequence[int]) -> tuple:
    """A ``RandomState.set_state`` tuple whose next ``random()`` calls return ``k / 2^53`` for each ``k`` in turn."""
    key = np.arange(624, dtype=np.uint64) * 2654435761 % 2**32  # any words past the head
    for i, k in enumerate(ks):
        if not 0 <= k < 2**53:
            raise ValueError(f"a 53-bit draw is needed, got {k!r}")
        key[2 * i], key[2 * i + 1] = _untemper((k >> 26) << 5), _untemper((k & (2**26 - 1)) << 6)
    return "MT19937", key.astype(np.uint32), 0


def pcg64_state(word: int, hi: int = 0x0123456789ABCDEF) -> dict[str, Any]:
    """A ``PCG64.state`` dict whose next ``next_uint64`` is ``word``."""
    if not 0 <= word <= MASK64:
        raise ValueError(f"a 64-bit word is needed, got {word!r}")
    lo = _rotl64(word, hi >> 58) ^ hi
    new = (hi << 64) | lo
    prev = ((new - INCREMENT) * pow(MULTIPLIER, -1, 1 << 128)) & MASK128
    return {"bit_generator": "PCG64", "state": {"state": prev, "inc": INCREMENT}, "has_uint32": 0, "uinteger": 0}


def generator_for(word: int) -> np.random.Generator:
    """numpy's Generator on a PCG64 whose next 64-bit output is ``word``."""
    bg = np.random.PCG64()
    bg.state = pcg64_state(word)
    return np.random.Generator(bg)


class ReplayGenerator:
    """A ``prng`` whose n-th call draws from numpy's Generator set to the n-th word (see module doc)."""

    def __init__(self, words: Sequence[int]) -> None:
        self._words = list(words)

    def __getattr__(self, name: str) -> Any:
        method = getattr(np.random.Generator, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            if not self._words:
                raise IndexError(f"prng.{name}: the witness has no more draws")
            return method(generator_for(self._words.pop(0)), *args, **kwargs)

        return call
