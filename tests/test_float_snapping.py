"""Mironov's snapping mechanism (samplers/plain/examples.py): search --float gives no float-level bound on it.

The tracer has no form for rounding a noisy value to a grid, so the search refuses the function with
the line and the operation: no certified bound at all, let alone one above Mironov's guarantee.
"""

from __future__ import annotations

import numpy as np
import pytest

from hybrid.cli import main
from hybrid.searcher.search import search
from samplers.errors import UntraceableError
from samplers.plain import statdp
from samplers.plain.examples import snapping


def test_example_releases_the_snapped_grid():
    """numpy runs it: outputs are multiples of 16 (the power of two >= 1/0.1) clamped to [-100, 100] (seeded)."""
    rng = np.random.default_rng(4)
    outs = {float(snapping(rng, [1], 0.1)) for _ in range(2000)}
    assert all(v in (-100.0, 100.0) or v % 16 == 0 for v in outs) and max(outs) <= 100 and min(outs) >= -100


def test_float_search_refuses_with_the_reason(capsys):
    argv = ["search", "samplers.plain.examples:snapping", "--size", "1", "--domain", "0..1", "--neighbours",
            "one_differ", "--float"]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1
    assert "examples.py" in cap.err and "np.round is not supported on symbolic values" in cap.err
    with pytest.raises(UntraceableError, match="np.round"):
        search(statdp(snapping, size=1, domain=(0, 1), neighbours="one_differ"), {"epsilon": 0.1},
               float_semantics=True)
