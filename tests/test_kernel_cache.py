"""No parallel loops in cached kernels: kernels compiled apart and loaded together draw what they
would draw compiled afresh.

numba names the function of a parallel (``prange``) loop after the address of an object in the
compiling process, and an address is reused once the object is freed: two sampler kernels
compiled one after the other in one test worker got one name, and a later process that loaded
both from the disk cache ran one kernel's loop with the other's arguments (another mechanism's
samples, or a corrupt heap: ``malloc`` aborted later in the run).  The kernels and the testers'
numba functions are serial now (:mod:`samplers.codegen`, :mod:`hybrid.testers.kernels`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MECHANISMS = ("one_time_rappor", "rr_count", "noisy_max_geom", "trunc_geom", "rr", "histogram_geom")

_COMPILE = """
import json, sys
import numpy as np
from samplers import catalogue
from samplers.compile import compile_sampler
from hybrid.testers import kernels
for name in sys.argv[1:]:  # one after the other in this process, as a test worker does
    s = compile_sampler(catalogue.get(name).trace())
    s.counts(tuple(s.program.domain.lo), 10, 0)
    del s
rows = np.zeros((3, 2))
kernels.linear_scores(rows, np.zeros(2), np.ones(2), np.ones(2), 0.0)
kernels.column_features(rows, np.array([1, 1]), np.array([0, 0]), np.array([0, 0]), np.zeros(1),
                        np.array([False, False]), np.array([np.nan, np.nan]), 2)
"""

_DRAW = """
import hashlib, json, sys
from samplers import catalogue
from samplers.compile import compile_sampler
out = {}
for name in sys.argv[1:]:
    s = compile_sampler(catalogue.get(name).trace())
    x = tuple(s.program.domain.hi)
    out[name] = [hashlib.sha256(s.sample(x, 100_000, 7).tobytes()).hexdigest(),
                 str(sorted(s.counts(x, 100_000, 7).items()))]
print(json.dumps(out))
"""


def _python(code: str, cache: Path) -> str:
    """Run ``code`` with the kernel cache in ``cache`` (and numba's own, for the testers' functions)."""
    env = {**os.environ, "DPHYBRID_CACHE_DIR": str(cache), "NUMBA_CACHE_DIR": str(cache / "numba"),
           "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-c", code, *MECHANISMS], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def test_cached_kernels_have_no_parallel_loops_and_draw_their_own_samples(tmp_path):
    shared, fresh = tmp_path / "shared", tmp_path / "fresh"
    _python(_COMPILE, shared)  # fills the caches, one kernel after the other
    cached = sorted(shared.rglob("*.nbc"))
    assert len(cached) >= len(MECHANISMS)
    assert not [p.name for p in cached if b"__numba_parfor_gufunc" in p.read_bytes()]
    loaded = json.loads(_python(_DRAW, shared))  # every kernel from the cache, in one process
    assert loaded == json.loads(_python(_DRAW, fresh))  # every kernel compiled afresh
    assert len({digest for digest, _ in loaded.values()}) == len(MECHANISMS)
