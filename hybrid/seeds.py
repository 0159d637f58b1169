"""Independent, reproducible seeds for every random stage of a tester."""

from __future__ import annotations

import numpy as np


def derive_seed(seed: int, *path: int) -> int:
    """A 63-bit seed determined by ``seed`` and a path of stage indices."""
    ss = np.random.SeedSequence([int(v) & 0xFFFFFFFFFFFFFFFF for v in (seed, *path)])
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
