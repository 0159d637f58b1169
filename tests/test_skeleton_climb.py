"""The event tuner's skeleton climb: a telling output skeleton that samples never show is found by
edits on the certified ratio (numerical sparse vector at n = 30, whose best events answer after a
long run of refusals), and every edit keeps the skeleton's length."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hybrid.searcher.numeric_events import EventTuner, _edit, _edits, sample_skeletons
from hybrid.searcher.state import certified_level
from samplers import catalogue
from samplers.compile import compile_sampler
from verifiers.continuous.backend import ContinuousBackend

BELOW, ABOVE, BOTTOM = 2, 0, 1  # numerical_svt's skeleton codes: the 0.0 refusal, a released value, bottom


def test_edits_keep_the_length_and_move_the_answers():
    skel = (BELOW, ABOVE, BELOW, BELOW, ABOVE, BOTTOM)
    edits = _edits(skel)
    assert {len(_edit(skel, *e)) for e in edits} == {len(skel)}
    assert _edit(skel, "move", 1, 3) == (BELOW, BELOW, BELOW, ABOVE, ABOVE, BOTTOM)  # an answer moved later
    assert _edit(skel, "insert", 0, BELOW) == (BELOW, BELOW, ABOVE, BELOW, BELOW, ABOVE)  # the last drops
    assert _edit(skel, "delete", 0, 0) == (ABOVE, BELOW, BELOW, ABOVE, BOTTOM, BOTTOM)  # the last repeats
    moved = {e[1] for e in edits if e[0] == "move"}
    assert moved == {1, 4}  # only the answers move: refusals are the common value, bottom never moves


def test_a_rare_skeleton_is_found_and_certified_at_the_true_level():
    n, h = 30, 15
    program = catalogue.get("numerical_svt").trace(n=n)
    backend = ContinuousBackend(program)
    sampler = compile_sampler(program)
    x, xp = [0] * h + [1] * (n - h), [1] * h + [0] * (n - h)
    ideal = (BELOW,) * h + (ABOVE, ABOVE) + (BOTTOM,) * (n - h - 2)
    seen = sample_skeletons(sampler.sample(x, 100_000, 31), (0.0,))
    assert (seen == np.array(ideal)).all(axis=1).sum() < 20  # too rare for the tuner's screening of samples

    tuner = EventTuner(backend, sampler, 31)
    tuned = tuner.tune(x, xp, 2_000, goal=lambda r: certified_level(r) >= 0.099)
    level = certified_level(tuned.ratio.lo)
    assert tuned.met and 0.099 <= level <= 0.1 + 1e-12  # true (and proved) level 0.1: never above
    assert math.isfinite(level)
