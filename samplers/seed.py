"""Seeds are integers in [0, 2^64): checked, never folded.

Folding (``seed & (2^64 - 1)``) would give ``-1`` and ``2^64 - 1`` one random stream and
record a seed that does not reproduce the run as written; a seed outside the range is
an error instead.
"""

from __future__ import annotations

from numbers import Integral

from samplers.errors import ParameterError

SEED_LIMIT = 2**64


def check_seed(seed: int) -> int:
    """``seed`` as a Python int, if it is an integer in [0, 2^64)."""
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise ParameterError(f"seed must be an integer, got {seed!r}")
    if not 0 <= int(seed) < SEED_LIMIT:
        raise ParameterError(f"seed must lie in [0, 2^64), got {seed}")
    return int(seed)
