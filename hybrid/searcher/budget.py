"""The limits of one search, apart from the search so that the CLI can show their defaults cheaply."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields, replace

from samplers.errors import ParameterError

MAX_SAMPLES = 10**10  # outputs a run may be asked for: at ~10^7 a second, hours beyond any time budget

MAX_PRECISION = 1.0  # the widest bracket asked for (search, verify, suites): a wider one says nothing about eps


@dataclass
class Budget:
    """Explicit limits of one search; hitting one is reported in the result.

    Every field but ``time`` is a count and decides the result, so a seed gives the
    same result on any machine; ``time`` is a safety limit (:mod:`samplers.deadline`)
    that stops whatever stage is running and says so in ``limits_hit``.
    """

    time: float = 300.0  # seconds for the whole search: a safety limit only
    samples: int = 20_000_000  # testers' budget: StatDP's pairs share half, the attack draws it all
    global_pairs: int = 20_000  # run the global verification only up to this many neighbour pairs
    local_steps: int = 300  # exact pair evaluations in the local search (each start, continuous noise)
    window: int = 40  # a local search stops after this many pair evaluations without the level growing by the precision
    explore: int = 32  # random neighbour pairs evaluated exactly besides the tested ones
    certify_pairs: int = 64  # continuous noise: candidate pairs whose level is enclosed or event tuned
    pair_window: int = 8  # released values: stop tuning candidate pairs after this many without the level growing by the precision
    tune_steps: int = 2_000  # continuous noise: certified ratios computed tuning one pair's event
    enclosures: int = 20_000  # continuous noise: regions enclosed certifying and improving (the work done)
    work: int = 30_000_000  # continuous noise: enclosure work in all (regions' constraints, integration steps)
    max_length: int = 40  # longest input tried when growing a length parameter
    prove_time: float = 120.0  # seconds for the proof rules (0: no proof stage), a safety limit: the catalogue proves
    # in 0.1-25 s on a busy 2-core machine (svt34_parallel the longest); a rule it stops says so in limits_hit

    def __post_init__(self) -> None:
        """Refuse a count that is not a non-negative integer and a negative or non-finite
        ``prove_time`` (``time`` is checked where the deadline is set)."""
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "time":
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Real if f.name == "prove_time" else numbers.Integral):
                ok = False
            else:
                ok = v >= 0 and math.isfinite(v)
            if not ok:
                what = "a non-negative finite number of seconds" if f.name == "prove_time" else "a non-negative integer"
                raise ParameterError(f"budget {f.name} must be {what}, got {v!r}")
        if self.samples > MAX_SAMPLES:
            raise ParameterError(f"budget samples = {self.samples:,} is more than the {MAX_SAMPLES:.0e} samples a run "
                                 "can draw (about 10^7 a second)")

    def shared(self, parts: int) -> Budget:
        """This budget's certification work (``enclosures``, ``work``) shared by ``parts`` searches of
        one entry's parts, so that searching a program part by part does no more work than whole."""
        return replace(self, enclosures=self.enclosures // parts, work=self.work // parts)
