"""How a library adapter draws many outputs fast: whole batches in one call, else chunks over the cores.

Two tools for :mod:`samplers.libraries`:

- :class:`BatchState`, a numpy ``RandomState`` whose scalar draws (``random()``,
  ``standard_normal()``) come ``n`` at a time.  A diffprivlib mechanism whose
  ``randomise`` only does numpy arithmetic on such draws (Laplace, Gaussian) then
  returns ``n`` outputs from one call, computed by the library's own code.  Whether a
  mechanism is of that kind is checked, not assumed (:func:`batch_agrees`): output
  ``i`` of a batch of 64 must equal, exactly, what ``randomise`` returns when called
  alone on the ``i``-th value of each draw.  Then each batched output is the library's
  per-call function of independent uniforms (or normals), so its law is the per-call
  law.  The check is evidence on 64 draws (a branch taken more rarely would not show),
  which is why the adapters try it only on mechanisms whose source they read to be numpy
  arithmetic on the draws (diffprivlib's Laplace, Gaussian and GaussianAnalytic).
- :func:`chunked`: ``n`` draws as fixed-size chunks, each with a seed derived from the
  run's seed and its index, run over the machine's cores with joblib when there are
  several chunks.  The chunking does not depend on the number of workers, so a seeded
  library gives the same outputs whether the chunks ran in parallel or not.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable, Sequence

import numpy as np

from samplers.errors import ParameterError

CHUNK = 8192  # draws per parallel task
_BATCHED = ("random", "standard_normal")  # RandomState methods a BatchState draws n at a time


class BatchState(np.random.RandomState):
    """A seeded ``RandomState`` whose size-less draws return ``n`` values, each kept in ``handed``."""

    def __init__(self, seed: int, n: int) -> None:
        super().__init__(seed)
        self.n = n
        self.handed: list[tuple[str, np.ndarray]] = []

    def _many(self, method: str, size: Any) -> Any:
        out = getattr(super(), method)(self.n if size is None else size)
        self.handed.append((method, out))
        return out

    def random(self, size: Any = None) -> Any:
        return self._many("random", size)

    def standard_normal(self, size: Any = None) -> Any:
        return self._many("standard_normal", size)


class ReplayState(np.random.RandomState):
    """Hands out the ``i``-th value of each batch a :class:`BatchState` gave, in the same order."""

    def __init__(self, handed: Sequence[tuple[str, np.ndarray]], i: int) -> None:
        super().__init__(0)
        self._queue = [(method, float(values[i])) for method, values in handed]

    def _next(self, method: str, size: Any) -> float:
        if size is not None or not self._queue or self._queue[0][0] != method:
            raise _Differs
        return self._queue.pop(0)[1]

    def random(self, size: Any = None) -> float:
        return self._next("random", size)

    def standard_normal(self, size: Any = None) -> float:
        return self._next("standard_normal", size)


class _Differs(Exception):
    """The per-call run asked for other draws than the batched run handed out."""


def batch_agrees(randomise: Callable[[np.random.RandomState], Any], n: int = 64, seed: int = 12345) -> bool:
    """Whether ``randomise(state)`` (build a mechanism on ``state``, randomise once) batches soundly.

    True when, on a :class:`BatchState` of ``n``, it returns an array of ``n`` outputs, each
    exactly what a per-call run returns on that output's share of the same draws.
    """
    state = BatchState(seed, n)
    try:
        out = np.asarray(randomise(state))
    except Exception:  # noqa: BLE001  the library's code does not run on arrays (a branch on a draw, ...)
        return False
    if out.shape != (n,) or not state.handed:
        return False
    for i in range(n):
        replay = ReplayState(state.handed, i)
        try:
            alone = randomise(replay)
        except Exception:  # noqa: BLE001  _Differs: other draws than the batch handed out
            return False
        if replay._queue or np.asarray(alone).shape != () or float(alone) != float(out[i]):
            return False
    return True


def chunk_seed(seed: int, index: int) -> int:
    """The seed of chunk ``index`` of a run seeded ``seed`` (a 32-bit value, as libraries take)."""
    return int(np.random.SeedSequence([int(seed), index]).generate_state(1, np.uint32)[0])


WORKERS_ENV = "DPHYBRID_LIBRARY_WORKERS"


@functools.cache
def workers() -> int:
    """Worker processes for chunked draws: ``$DPHYBRID_LIBRARY_WORKERS``, else the machine's cores.

    On a machine whose cores other work already keeps busy, extra processes only add
    overhead (docs/libraries.md); 1 draws every chunk in the calling process.
    """
    import joblib

    text = os.environ.get(WORKERS_ENV)
    if text is None:
        return max(1, joblib.cpu_count())
    if not text.strip().isdigit() or int(text) < 1:
        raise ParameterError(f"{WORKERS_ENV} must be a positive integer, got {text!r}")
    return int(text)


def chunked(draw: Callable[[int, int], np.ndarray], task: Callable[[int, int], Any] | None, n: int,
            seed: int) -> np.ndarray:
    """``n`` draws as chunks of :data:`CHUNK`: ``draw(size, seed)`` here, or ``task`` in joblib workers.

    ``task(size, seed)`` must be a picklable call doing what ``draw`` does in another
    process (the adapter rebuilt there); without one, or with one chunk or one core, the
    chunks run here, in order.
    """
    sizes = [min(CHUNK, n - start) for start in range(0, n, CHUNK)]
    seeds = [chunk_seed(seed, i) for i in range(len(sizes))]
    if task is None or len(sizes) < 2 or workers() < 2:
        parts = [draw(size, s) for size, s in zip(sizes, seeds)]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=min(workers(), len(sizes)))(delayed(task)(size, s) for size, s in zip(sizes, seeds))
    return np.concatenate([np.asarray(p) for p in parts]) if parts else np.zeros(0)
