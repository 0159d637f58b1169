"""search --float on diffprivlib's Laplace: eps = inf by the grid lemma, the witness replayed by diffprivlib itself.

diffprivlib is an optional extra (``pip install '.[diffprivlib]'``); the tests that run it are skipped
without it.  Deterministic: no statistics.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from hybrid.cli import main
from verifiers.float64.diffprivlib_laplace import COS_ERROR, enclosure, scale_of, witness_draw
from verifiers.float64.grid import grid, unreachable
from verifiers.float64.replay import mt19937_state


def test_random_state_replays_chosen_draws():
    """numpy's own RandomState, set by mt19937_state, returns k / 2^53 for each chosen k (seeded choices)."""
    rng = random.Random(3)
    ks = [0, 1, 2**53 - 1, 2**52] + [rng.randrange(2**53) for _ in range(100)]
    rs = np.random.RandomState()
    rs.set_state(mt19937_state(ks))
    assert [rs.random() for _ in ks] == [k / 2**53 for k in ks]


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 1e-9, 300.0])
def test_enclosure_holds_for_every_log_and_cos_of_the_model(epsilon):
    """The bounds on |W| for the witness's draws hold when log and cos return other doubles within the model
    (each log moved by one ulp, each cos by a relative 2^-21, both ways), and lie below the grid of x' = 1."""
    scale = scale_of(epsilon, 1.0, 0.0)
    j = witness_draw(scale, grid(1.0))
    assert j is not None
    lo, hi = enclosure(j, scale)
    assert 0 < lo and hi < grid(1.0)
    log = math.log(1 - 2.0**-53)
    cos = math.cos(math.pi * (j / 2**53))
    for dl in (-1, 0, 1):
        for dc in (-1, 0, 1):
            lg = log if dl == 0 else math.nextafter(log, dl * math.inf)
            c = cos * (1 + dc * float(COS_ERROR) / 2)
            w = scale * (lg * c + lg * c)
            assert lo <= abs(Fraction(w)) <= hi and unreachable(1.0, 0.0 - w)


def test_cli_certifies_inf_and_diffprivlib_replays_it(capsys):
    mechs = pytest.importorskip("diffprivlib.mechanisms")
    argv = ["search", "diffprivlib:laplace", "-p", "epsilon=0.1", "--float"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["float_eps_lower"] == "inf" and d["float_certified"] is True and d["float_model"] == "diffprivlib's Laplace"
    assert d["certified"] is False and d["eps_upper"] is None  # no real-number verdict on a black box
    w = d["float_witness"]
    assert w["x"] == [0] and w["x_prime"] == [1] and w["robust"] and w["draws_x_prime_possible"] == 0
    o = float.fromhex(w["output_hex"])
    assert o == w["output"] and unreachable(1.0, o)
    key = np.arange(624, dtype=np.uint32)
    key[:8] = w["random_state"]["mt19937_key_head"]
    rs = np.random.RandomState()
    rs.set_state(("MT19937", key, 0))
    assert mechs.Laplace(epsilon=0.1, sensitivity=1, random_state=rs).randomise(0.0) == o  # diffprivlib's own code
    rs.set_state(("MT19937", key, 0))
    assert [rs.random() for _ in range(4)] == [d_["k"] / 2**53 for d_ in w["draws_x"]]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "float64 (diffprivlib's Laplace): eps >= inf certified" in out and "grid lemma" in out


def test_no_input_zero_says_why(capsys):
    pytest.importorskip("diffprivlib.mechanisms")
    assert main(["search", "diffprivlib:laplace", "-p", "lo=1", "--float"]) == 3
    cap = capsys.readouterr()
    assert "no certified bound: no neighbour pair has x = 0" in cap.out and "no float-level certificate" in cap.err


@pytest.mark.parametrize("argv,message", [
    (["search", "diffprivlib:laplace"], "search --float audits"),
    (["search", "diffprivlib:gaussian", "--float"], "no float-level model"),
    (["search", "diffprivlib:laplace", "--size", "2", "--float"], "--size applies to a file.py:alg"),
])
def test_refusals_are_one_line(argv, message, capsys):
    pytest.importorskip("diffprivlib.mechanisms")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
