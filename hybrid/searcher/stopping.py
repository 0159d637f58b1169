"""When a local search is done: the certified level has converged, or it meets a proved upper bound.

A local search (hill climbing on the inputs) keeps finding tiny improvements long after the
certified level has settled; every pair it evaluates costs exact or enclosure work.  Two rules
end it early, both decided by counts and exact comparisons (never the clock), so a seed gives
the same result on any machine:

* **converged** -- over the last ``window`` pair evaluations the certified level grew by no
  more than the precision asked for;
* **proved upper** -- the certified level is within a tenth of the precision
  (:data:`MEET_SHARE`) of an upper bound that a prover established: a bound that meets the
  proof is optimal.  A tenth, not the whole precision: the search would otherwise settle
  for a bound up to ``precision`` below the level it reaches without the proof (svt4 at
  0.1740 instead of 0.1746 under a proof of 0.175).

The rule that stopped a search is reported (:data:`STOPPED_BY` names the rules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MEET_SHARE = 0.1  # share of the precision within which a certified level meets a proved upper bound

STOPPED_BY = {
    "converged": "the certified level grew by at most the precision over the convergence window",
    "proved_upper": "the certified level met the proved upper bound (up to a tenth of the precision)",
    "local_optimum": "no single-coordinate move improves the certified level",
    "local_steps": "the local_steps budget (pair evaluations per local search)",
    "enclosures": "the enclosures or work budget (regions enclosed, the work of enclosing them)",
    "time": "the time limit (a safety limit)",
}


@dataclass
class Convergence:
    """The stop rules of one local search; :meth:`step` after every pair evaluation."""

    precision: float
    window: int
    proved_upper: float | None = None
    _anchor: float = -math.inf  # the level at the last growth by more than the precision
    _since: int = 0  # pair evaluations since then

    def meets(self, level: float) -> bool:
        """The certified level meets the proved upper bound (within a tenth of the precision)."""
        return self.proved_upper is not None and level >= self.proved_upper - MEET_SHARE * self.precision

    def start(self, level: float) -> str | None:
        """Begin at a certified level; the rule that says the search need not run at all, or None."""
        self._anchor, self._since = level, 0
        return "proved_upper" if self.meets(level) else None

    def step(self, level: float) -> str | None:
        """One more pair evaluation, the best certified level now; the rule that stops, or None."""
        if self.meets(level):
            return "proved_upper"
        if level > self._anchor + self.precision:
            self._anchor, self._since = level, 0
            return None
        self._since += 1
        return "converged" if self.window > 0 and self._since >= self.window else None


__all__ = ["Convergence", "STOPPED_BY"]
