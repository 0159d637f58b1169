"""The search on an argmax over many values certifies single winners' events, not pair levels."""

from __future__ import annotations

import hybrid.searcher.continuous_search as continuous_search
from hybrid.searcher.continuous_search import likely_winners
from hybrid.searcher.search import search


def test_likely_winners_are_the_largest_gaps_then_the_largest_entry():
    assert likely_winners([1, 1, 1, 1], [0, 2, 2, 2]) == [0, 1]
    assert likely_winners([0, 3, 1, 5], [1, 1, 1, 5]) == [1, 3]
    assert likely_winners([2, 2], [2, 2], count=1) == [0]


def test_report_noisy_max_certified_on_winners_events(monkeypatch):
    """With the cut lowered to 10 values, report noisy max at n = 20 is certified on a single winner's
    event: within 1% of its true level 0.1 and never above it (eps-DP, proved), the witness event
    one index."""
    monkeypatch.setattr(continuous_search, "MANY_WINNERS", 10)
    r = search("report_noisy_max1", {"n": 20}, seed=0)
    assert r.certified and 0.099 <= r.eps_lower <= 0.1
    assert r.eps_upper is not None and r.eps_upper <= 0.1 + 1e-12
    assert len(r.witness["event"]) == 1 and r.bracket is None  # no pair level: the event's ratio only
    assert any("single winners' events" in m for m in r.limits_hit)
