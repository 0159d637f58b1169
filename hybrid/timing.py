"""Per-stage wall-clock totals of the testers (reported under ``timings``)."""

from __future__ import annotations

import time
from typing import Any, MutableMapping, Sequence

import numpy as np


def sample_timed(sampler: Any, x: Sequence[int], n: int, seed: int, timings: MutableMapping[str, float]) -> np.ndarray:
    """``sampler.sample(x, n, seed)``, adding its duration to ``timings["sample"]``."""
    t = time.perf_counter()
    out = sampler.sample(x, n, seed)
    timings["sample"] = timings.get("sample", 0.0) + time.perf_counter() - t
    return out
