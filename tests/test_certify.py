"""Certifying witness files: ours (round trip with search), StatDP's, and bad files."""

import json

import numpy as np
import pytest

from hybrid.searcher.certify import WitnessFileError, certify_file, parse_witnesses, certify
from hybrid.cli import main
from hybrid.searcher.search import Budget, search
from samplers import catalogue
from samplers.errors import DomainError, UnknownMechanism


def write(tmp_path, obj, name="w.json"):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return p


def test_search_witness_round_trips(tmp_path):
    res = search(catalogue.get("noisy_max_geom"), dict(m=3), budget=Budget(samples=300_000)).to_json()
    [cert] = certify_file(write(tmp_path, res))
    assert cert.to_json()["ratio"] == res["ratio"] == "24/7"
    [cert] = certify_file(write(tmp_path, res), claimed_eps=1.2)
    assert cert.violation_holds is True  # ln(24/7) = 1.232 > 1.2
    [cert] = certify_file(write(tmp_path, res), claimed_eps=1.24)
    assert cert.violation_holds is False


def test_own_witness_format():
    w = {"mechanism": "above_threshold_geom", "params": {"L": 2}, "x": [0, 1], "x_prime": [1, 0],
         "event": [[0, 1]], "claimed_eps": 1.0}
    [c] = [certify(x) for x in parse_witnesses(w)]
    d = c.to_json()
    assert d["ratio"] == "29/8" and d["violation_holds"] is True
    assert d["p_x"] == "29/90"


def test_bottom_in_events():
    w = {"mechanism": "above_threshold_geom", "params": {"L": 2}, "x": [2, 2], "x_prime": [1, 1],
         "event": [[1, "bottom"]]}
    [c] = [certify(x) for x in parse_witnesses(w)]
    assert c.p_x > 0


def test_statdp_result_list(tmp_path):
    # StatDP's (epsilon, p, d1, d2, kwargs, event) rows; kwargs carry the mechanism's parameters
    rows = [[1.3, 0.001, [1, 1, 1, 1, 1], [0, 2, 2, 2, 2], {"epsilon": 1.3, "a": "1/2"}, [1]],
            [1.4, 0.9, [1, 1, 1, 1, 1], [0, 2, 2, 2, 2], {"epsilon": 1.4}, [1]]]
    certs = certify_file(write(tmp_path, rows), mechanism="noisy_max_geom")
    assert [c.to_json()["ratio"] for c in certs] == ["288/73", "288/73"]
    assert [c.violation_holds for c in certs] == [True, False]


def test_statdp_interval_events():
    rows = [[0.5, 0.0, [0], [1], {"epsilon": 0.5}, [[float("-inf"), 0.5]]]]
    [c] = [certify(w) for w in parse_witnesses(rows, mechanism="trunc_geom")]
    assert c.to_json()["ratio"] == "2"  # {output 0} = (-inf, 0.5): P = 2/3 vs 1/3


@pytest.mark.parametrize("content, error, message", [
    ("{not json", WitnessFileError, "not valid JSON"),
    ({"mechanism": "rr"}, WitnessFileError, "lacks"),
    ({"mechanism": "nope", "x": [0], "x_prime": [1], "event": [0]}, UnknownMechanism, "unknown mechanism"),
    ({"mechanism": "trunc_geom", "x": [0], "x_prime": [5], "event": [0]}, DomainError, "outside"),
    ({"mechanism": "trunc_geom", "x": [0], "x_prime": [2], "event": [0]}, DomainError, "not one_differ neighbours"),
    ({"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": 3}, WitnessFileError, "list of outputs"),
    ({"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": {"foo": 1}}, WitnessFileError, "unrecognised"),
    ({"mechanism": "trunc_geom", "x": "0", "x_prime": [1], "event": [0]}, WitnessFileError, "list of integers"),
    ([[0.5, 0.1, [0], [1], {"epsilon": 0.5}, [0]]], WitnessFileError, "--mechanism"),
    ({"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": [0], "claimed_eps": -1}, WitnessFileError,
     "finite non-negative"),
    ({"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": [0], "claimed_eps": "big"}, WitnessFileError,
     "finite non-negative"),
    (7, WitnessFileError, "not a witness"),
])
def test_bad_witness_files(tmp_path, content, error, message):
    p = write(tmp_path, content)
    with pytest.raises(error, match=message):
        certify_file(p)


def test_certify_cli(tmp_path, capsys):
    p = write(tmp_path, {"mechanism": "trunc_geom", "x": [0], "x_prime": [1], "event": [0], "claimed_eps": 0.5})
    assert main(["certify", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ratio"] == "2" and d["violation_holds"] is True
    assert main(["certify", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err
    for bad in ("nan", "inf", "-1"):  # a claim that cannot be compared with e^eps
        assert main(["certify", str(p), f"--eps={bad}"]) == 2
        assert "finite non-negative" in capsys.readouterr().err


def test_search_cli(tmp_path, capsys):
    plot = tmp_path / "p.png"
    assert main(["search", "trunc_geom", "--samples", "200000", "--json", "--plot", str(plot)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ratio"] == "2" and plot.stat().st_size > 1000
    assert main(["search", "trunc_geom", "--precision", "0"]) == 2
    assert "precision" in capsys.readouterr().err
    assert main(["search", "trunc_geom", "-p", "a=2"]) == 2
    assert main(["search", "laplace", "--backend", "bdd"]) == 2  # named exact backend, continuous noise
    assert "continuous noise" in capsys.readouterr().err
    assert main(["search", "trunc_geom", "--samples", "200000", "--json", "--plot", str(tmp_path / "no" / "p.png")]) == 2
    out, err = capsys.readouterr()  # refused before the search, not after it
    assert out == "" and err.count("\n") == 1 and "cannot write the plot" in err


def test_exported_attack_is_certified_exactly(tmp_path):
    """A DP-Sniper-style attack fitted on samples: P(S) = P(score > t) + q P(score = t), exactly."""
    from fractions import Fraction

    from hybrid.testers.testing import sniper_estimate
    from samplers.compile import compile_sampler
    from verifiers.enumerate import Enumerator

    program = catalogue.get("noisy_max_geom").trace(m=3)
    est = sniper_estimate(compile_sampler(program), samples=200_000, seed=3).to_json()
    assert "attack" in est["witness"]["event"]
    [cert] = certify_file(write(tmp_path, est))
    attack = parse_witnesses(est)[0]
    exact = Enumerator(program)
    x, xp = cert.witness.x, cert.witness.x_prime
    support = sorted(set(exact.distribution(x)) | set(exact.distribution(xp)))
    s = attack.event.scores(np.asarray(support, dtype=np.int64))
    w = {o: Fraction(1) if v > attack.event.t else Fraction(attack.event.q) if v == attack.event.t else Fraction(0)
         for o, v in zip(support, s)}
    assert set(w.values()) <= {Fraction(0), Fraction(1), Fraction(est["witness"]["event"]["attack"]["q"])}
    assert cert.p_x == sum(p * w[o] for o, p in exact.distribution(x).items())
    assert cert.ratio <= Fraction(24, 7)  # an attack can never beat the exact level
    assert cert.to_json()["eps_lower"] >= est["eps_lower"] - 0.05  # and the sampled bound was honest
