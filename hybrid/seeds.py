"""Independent, reproducible seeds for every random stage of a tester."""

from __future__ import annotations

import numpy as np

from samplers.seed import check_seed


def derive_seed(seed: int, *path: int) -> int:
    """A 63-bit seed determined by ``seed`` (checked: [0, 2^64)) and a path of stage indices (any integers)."""
    ss = np.random.SeedSequence([check_seed(seed), *(int(v) & 0xFFFFFFFFFFFFFFFF for v in path)])
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
