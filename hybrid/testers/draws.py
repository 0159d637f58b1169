"""The outputs a tester draws: one sample per (stage, input), reused by every pair.

A stage's sample of input ``x`` is drawn with a seed of the stage and ``x`` alone, so
every candidate pair that contains ``x`` sees the same outputs and a black box that
costs a Python call per output is asked once per input, not once per pair.  Samples
are kept while they fit in :data:`CACHE_BYTES`; a sample drawn again is the same
(same seed), so caching changes the time taken, never the result.

Integer outputs with at most :data:`HISTOGRAM_MAX` distinct values are held as a
histogram (distinct rows and their counts), a sufficient statistic for everything the
attack computes from them: scores are computed once per distinct output and hits are
counted with multiplicities.

:class:`Draws` also counts the outputs drawn against the plan and reports progress with
an estimate of the time left, and checks the time limit in force
(:mod:`samplers.deadline`) before every batch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, MutableMapping, Sequence

import numpy as np

from hybrid.testers.events import distinct_counts
from hybrid.seeds import derive_seed
from samplers import deadline

BATCH = 1 << 21  # outputs per sampler call (black boxes declare a smaller ``batch``)
CACHE_BYTES = 1 << 28  # raw samples kept for reuse
HISTOGRAM_MAX = 4096  # distinct outputs up to which a sample is held as counts
PROBE = 20_000  # outputs looked at to decide whether a sample is worth counting


@dataclass(frozen=True)
class Sample:
    """Outputs of one input: distinct ``rows`` with ``counts``, or every row once (``counts`` None)."""

    rows: np.ndarray
    counts: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.rows) if self.counts is None else int(self.counts.sum())

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + (0 if self.counts is None else self.counts.nbytes)

    def expanded(self) -> np.ndarray:
        """Every output (a histogram repeated out; rows in the order of their values)."""
        return self.rows if self.counts is None else np.repeat(self.rows, self.counts, axis=0)


def as_sample(out: np.ndarray) -> Sample:
    """``out`` as a histogram when its outputs are integers with few distinct values."""
    if out.dtype.kind != "i" or not len(out):
        return Sample(out)
    if len(distinct_counts(out[:PROBE], out[:0])[0]) > HISTOGRAM_MAX:
        return Sample(out)
    rows, counts, _ = distinct_counts(out, out[:0])
    return Sample(out) if len(rows) > HISTOGRAM_MAX else Sample(rows, counts)


def seed_of(seed: int, stage: int, x: Sequence[int]) -> int:
    """The seed of input ``x``'s sample in ``stage`` (independent of any pair)."""
    return derive_seed(seed, stage, len(x), *x)


class Draws:
    """Samples per (stage, input) for one sampler, counted, cached and timed."""

    def __init__(self, sampler: Any, seed: int, timings: MutableMapping[str, float],
                 progress: Callable[[str], None]) -> None:
        self.sampler, self.seed, self.timings, self.say = sampler, seed, timings, progress
        self.batch = int(getattr(sampler, "batch", BATCH))
        self.drawn = 0  # outputs drawn so far
        self.planned = 0  # outputs the caller plans to draw in all
        self._cache: dict[tuple[int, tuple[int, ...], int], Sample] = {}
        self._cached = 0
        self._t0 = time.perf_counter()

    def plan(self, total: int) -> None:
        """How many outputs the whole run will draw (for the estimate of the time left)."""
        self.planned = max(total, self.drawn)

    def batch_of(self, x: Sequence[int], n: int, seed: int, stage: str) -> np.ndarray:
        """``n`` fresh outputs of ``x``, after a look at the clock; progress reported after."""
        deadline.check(f"while sampling ({stage})")
        t = time.perf_counter()
        out = self.sampler.sample(tuple(x), int(n), seed)
        self.timings["sample"] = self.timings.get("sample", 0.0) + time.perf_counter() - t
        self.drawn += int(n)
        self._report(stage)
        return out

    def sample(self, stage: int, x: Sequence[int], n: int, label: str) -> Sample:
        """Input ``x``'s sample of ``n`` outputs in ``stage`` (drawn once, in batches)."""
        key = (stage, tuple(x), int(n))
        if key in self._cache:
            return self._cache[key]
        seed = seed_of(self.seed, stage, x)
        parts = [self.batch_of(x, min(self.batch, n - start), derive_seed(seed, b), label)
                 for b, start in enumerate(range(0, n, self.batch))]
        s = as_sample(parts[0] if len(parts) == 1 else np.concatenate(parts))
        if self._cached + s.nbytes <= CACHE_BYTES:
            self._cache[key] = s
            self._cached += s.nbytes
        return s

    def _report(self, stage: str) -> None:
        if not self.planned:
            self.say(f"{stage}: {self.drawn:,} outputs drawn")
            return
        elapsed = time.perf_counter() - self._t0
        left = max(0, self.planned - self.drawn)
        eta = f", about {elapsed / self.drawn * left:.0f} s left" if self.drawn and elapsed > 1 else ""
        self.say(f"{stage}: {self.drawn:,} of {self.planned:,} outputs drawn{eta}")
