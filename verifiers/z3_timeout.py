"""A z3 call's timeout within the command's time budget: a solver must not run past the deadline.

z3 reads its ``timeout`` as an unsigned 32-bit count of milliseconds; a call stopped by it answers
``unknown``, and the caller then asks :func:`samplers.deadline.check`, which raises once the
budget is spent (any other ``unknown`` stays a result).
"""

from __future__ import annotations

import math

from samplers import deadline

Z3_MAX_MS = 2**32 - 1


def bounded_ms(ms: int | None) -> int | None:
    """``ms`` (None: no limit of its own), cut to the time left before the deadline."""
    left = deadline.remaining()
    if left == math.inf:
        return ms
    return min(ms if ms is not None else Z3_MAX_MS, max(1, int(left * 1000) + 1))
