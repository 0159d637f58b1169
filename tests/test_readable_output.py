"""What a person reads: witnesses and budgets as text, tables that lose nothing in a pipe, the
length a grown witness holds at, reports in suite order, bound plots without warnings."""

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from hybrid.cli import main
from hybrid.cli.render import event_text
from hybrid.cli.summary import print_search
from hybrid.suites.plots import bounds_figure
from hybrid.suites.report import plot_data, plot_labels
from hybrid.suites.results_log import current_rows, read_results
from hybrid.testers.attack import Attack, Model
from hybrid.testers.transforms import Column, Transform

RAW = re.compile(r"np\.|\{'|': ")  # a Python repr of a dict or a numpy scalar


def _env_without_columns():
    return {k: v for k, v in os.environ.items() if k != "COLUMNS"}


@pytest.mark.slow
def test_continuous_witness_and_piped_tables_are_whole():
    """``dphybrid search laplace | cat``: the event is described, and no table cell is cut (its
    tester's certified ratio is a 57-character fraction, beyond an 80-column table)."""
    res = subprocess.run([sys.executable, "-m", "hybrid.cli", "search", "laplace", "--samples", "20000"],
                         capture_output=True, text=True, env=_env_without_columns(), timeout=300)
    out = res.stdout
    assert res.returncode == 0, res.stderr
    assert "\x1b[" not in out and "…" not in out and not RAW.search(out), out
    assert re.search(r"^  event: output (<|>=) -?\d", out, re.M), out
    cells = [line.split("│")[4].strip() for line in out.splitlines() if line.startswith("│")]
    assert cells and all(re.fullmatch(r"\d+/\d+|\d+(\.\d+)?(e[+-]\d+)?|inf", c) for c in cells), cells
    assert any(len(c) > 40 for c in cells), "no long exact ratio to keep whole"


def _long_result():
    ratios = [f"{7 ** 29 + i}/{5 ** 33 + i}" for i in range(3)]
    return {
        "mechanism": "laplace", "params": {"eps": 0.1}, "certified": True, "eps_lower": 0.0999, "ratio": ratios[0],
        "backend": "continuous", "precision": 1e-3, "bracket": [0.0999, 0.1001],
        "witness": {"params": {"eps": 0.1}, "x": [0], "x_prime": [1],
                    "event": {"all": [{"feature": {"kind": "component", "index": i}, "below": np.float64(0.5)}
                                      for i in range(4)]}},
        "candidates": [{"x": [0], "x_prime": [1], "origin": "statdp", "ratio": r} for r in ratios],
        "limits_hit": [], "timings": {"total": 1.0},
    }, ratios


def test_narrow_tables_fold_instead_of_cutting(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "44")
    result, ratios = _long_result()
    print_search(result)
    out = capsys.readouterr().out
    assert "…" not in out and max(map(len, out.splitlines())) <= 44
    assert "event: each of output[0..3] < 0.5" in out.replace("\n", " ").replace("  ", " ") and not RAW.search(out)
    folded = "".join(line.split("│")[4].strip() for line in out.splitlines() if line.startswith("│"))
    assert folded == "".join(ratios)  # every digit of every ratio, in order


def test_events_read_as_text():
    assert event_text([[0, 1, "bottom"]]) == "output in {(0, 1, ⊥)}"
    assert event_text({"feature": {"kind": "identity"}, "at_least": np.float64(2.0)}) == "output >= 2"
    linear = {"feature": {"kind": "linear", "weights": [-1.0, 1.0, 0.0]}, "below": 0.25}
    assert event_text(linear) == "output[1] - output[0] < 0.25"
    attack = Attack((0,), (1,), Transform("identity", (Column("numeric", bottom=True),)),
                    Model("logistic", np.zeros(2), np.ones(2), (np.ones((2, 1)),), (np.zeros(1),)), 0.5, 0.25, 0.01)
    text = event_text(attack.to_json())
    assert text.startswith("logistic attack (transform identity): score > 0.5") and "[" not in text
    custom = attack.to_json()
    custom["attack"]["transform"] = {"name": "mine", "custom": True}  # cannot be rebuilt: still summarised
    assert event_text(custom).startswith("logistic attack (transform mine)")


def test_node_budget_is_a_sentence(capsys):
    assert main(["verify", "noisy_max_geom", "--node-budget", "10"]) == 3  # no result
    err = capsys.readouterr().err
    assert "BDD node budget exceeded" in err and "--node-budget" in err and not RAW.search(err), err


def test_verify_bounds_are_rounded_outwards(capsys):
    assert main(["verify", "noisy_max_geom", "-p", "m=3"]) == 0
    out = capsys.readouterr().out
    assert "e^eps = 24/7, eps in [1.232143, 1.232144]" in out  # ln(24/7) = 1.2321436...


def test_header_names_the_grown_length(capsys):
    assert main(["search", "above_threshold_geom", "--claimed-eps", "3", "--samples", "20000"]) == 0
    out = capsys.readouterr().out
    x = re.search(r"witness: x = \[([^\]]*)\]", out).group(1)
    length = len(x.split(","))
    assert length > 2  # the default L=2 does not refute eps = 3: the search grew L
    header = out.splitlines()[0]
    assert header.startswith("above_threshold_geom ") and f"L={length} " in header, out
    assert f"the search grew L=2 to L={length}" in out and "candidate pairs certified at L=2" in out


ENTRIES = [  # mechanism, params, claim, reference, and what a search found: eps_lower, ratio
    ("noisy_max_geom", {"m": 3}, 1.0, {"exact_ratio": "24/7"}, 1.2321436812926323, "24/7"),
    ("rr", {"n": 2, "lam": "1/4"}, None, {"exact_ratio": "3", "dpsniper": 1.0}, 1.0986122886681096, "3"),
    ("rr", {"n": 2, "lam": "1/3"}, None, {"exact_ratio": "2"}, 0.6931471805599452, "2"),
    ("rr", {"n": 2, "lam": "0"}, None, {"exact_ratio": "inf"}, "inf", "inf"),
    ("rr", {"n": 2, "lam": "1/2"}, None, {"exact_ratio": "1"}, 0.0, "1"),
]
LABELS = ["noisy_max_geom", "rr(lam=1/4)", "rr(lam=1/3)", "rr(lam=0)", "rr(lam=1/2)"]


@pytest.fixture
def results(tmp_path):
    """A results file whose rows were written in another order than the suite's (as at --jobs 2)."""
    rows = []
    for i, (mech, params, claim, ref, low, ratio) in enumerate(ENTRIES):
        entry = {"id": f"{mech} {params}", "mechanism": mech, "params": params, "claimed_eps": claim,
                 "reference": ref}
        rows.append({"id": entry["id"], "index": i, "entry": entry, "status": "ok", "elapsed": 1.0,
                     "result": {"certified": True, "eps_lower": low, "ratio": ratio, "stat_interval": [0.0, "inf"],
                                "witness": {"x": [0, 1], "x_prime": [1, 1], "event": [[0, 1]]}}})
    path = tmp_path / "bars.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [rows[2], rows[0], rows[4], rows[3], rows[1]]))
    return path


def test_report_is_in_suite_order(results, capsys):
    assert main(["report", str(results)]) == 0
    rows = [line.split("|")[1:3] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [f"{m.strip()} {p.strip()}" for m, p in rows[1:]] == [
        "noisy_max_geom m=3", "rr n=2 lam=1/4", "rr n=2 lam=1/3", "rr n=2 lam=0", "rr n=2 lam=1/2"]


@pytest.mark.slow
def test_bounds_plot_without_warnings(results, tmp_path):
    png = tmp_path / "bars.png"
    res = subprocess.run([sys.executable, "-W", "error", "-m", "hybrid.cli", "report", str(results),
                          "--plot", str(png)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert png.read_bytes().startswith(b"\x89PNG")


def test_bounds_plot_shows_every_bar(results):
    fig = bounds_figure(*plot_data(current_rows(read_results(results))), "bars")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == LABELS
    bars = ax.patches
    top = ax.get_ylim()[1]
    assert bars and all(math.isfinite(b.get_height()) and 0 <= b.get_height() < top for b in bars)
    capped = [b for b in bars if b.get_hatch()]
    assert len(capped) == 2  # rr(lam=0): ours and the exact level, both inf
    assert max(b.get_height() for b in bars if not b.get_hatch()) < capped[0].get_height()
    marks = sorted(t.get_text() for t in ax.texts)
    assert marks == ["0", "0", "inf", "inf"]  # rr(lam=1/2) is 0-DP: ours and the exact level
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"dphybrid lower bound", "DP-Sniper", "exact level", "claimed eps"} == set(legend)


def test_plot_labels_tell_alike_entries_apart():
    def row(params, claim=None):
        return {"entry": {"mechanism": "rr", "params": params, "claimed_eps": claim}}

    rows = [row({"n": 4, "lam": "1/4"}), row({"n": 4, "lam": "1/4"}, 1.0), row({"n": 4, "lam": "1/5"}),
            row({"n": 4, "lam": "1/5"})]
    assert plot_labels(rows) == ["rr(lam=1/4)", "rr(lam=1/4, claim 1)", "rr(lam=1/5) #3", "rr(lam=1/5) #4"]


def test_a_proved_upper_is_shown_never_below_the_proof():
    """Short exact decimals print as such; an eps just above one (a float parameter's binary
    value) prints as the rounded-up double in full, never as the short decimal below it."""
    from fractions import Fraction

    from hybrid.formats import proved_upper_str
    from verifiers.prover.proof import round_up

    assert proved_upper_str(0.175, Fraction(7, 40)) == "0.175"
    svt4 = Fraction(7, 4) * Fraction(0.1)  # (1 + 6c)/4 eps with eps the double nearest 0.1
    shown = proved_upper_str(round_up(svt4), svt4)
    assert shown == "0.17500000000000002" and Fraction(shown) >= svt4
    third = proved_upper_str(round_up(Fraction(1, 3)), Fraction(1, 3))
    assert third == "0.333334" and Fraction(third) >= Fraction(1, 3)


def test_long_vectors_are_abbreviated_in_text_and_whole_in_json(capsys):
    from hybrid.cli import main as cli
    from hybrid.cli.render import pair_text, vector_text

    assert vector_text(range(3)) == "[0, 1, 2]"
    assert vector_text([1] * 1000) == "[1, 1, 1, 1, 1, 1, 1, 1, ... (1,000 values)]"
    assert pair_text([1] * 20, [1] * 19 + [0]).endswith("they differ at [19] 1 vs 0")
    fast = ["--samples", "20000"]  # testing is not what this is about: a small count keeps it short
    assert cli(["search", "rr", "-p", "n=300", "--no-global", "--time-budget", "60", *fast]) == 0
    text = capsys.readouterr().out
    assert "(300 values)" in text and len(text) < 10_000, len(text)
    assert cli(["search", "rr", "-p", "n=300", "--no-global", "--time-budget", "60", "--json", *fast]) == 0
    w = json.loads(capsys.readouterr().out)["witness"]
    assert len(w["x"]) == len(w["x_prime"]) == 300
