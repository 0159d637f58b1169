"""Proof files that cannot lie (issue 28, part 5): ``dphybrid certify`` refuses a proof file that
breaks its contract with one line and exit status 2, re-checks a proof of a plain function with
the inputs written in the file, and ``search`` says a contradiction of its bounds on one line.

Every hostile file here was confirmed (``delta <= -1``, ``eps <= inf``), "REJECTED" with exit
status 0, or a traceback (OverflowError, ZeroDivisionError, ValueError) before.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest

from hybrid.cli import main
from hybrid.cli.certify import REJECTED
from hybrid.searcher.proof_file import ProofFileError, recheck
from samplers.errors import DPHybridError

RAW = "@raw@"  # a value written into the JSON text as is: NaN, Infinity, 1e400, a 401-digit integer
HUGE = "1" + "0" * 400  # 10^400


MIXED = '''
import numpy as np


def alg(prng, queries, epsilon):  # randomised response beside Laplace: a composition with a part proved by alignment
    q = np.asarray(queries)
    return (int(q[0] >= 1) ^ int(prng.random() < 0.25), q[1] + prng.laplace(scale=1 / epsilon))
'''


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def proofs(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """Proof files written by ``dphybrid prove``: composition (with a ratio, and with a part's proof),
    alignment, Gaussian; each confirmed as written, so a hostile file is refused for what was changed."""
    folder = tmp_path_factory.mktemp("proofs")
    (folder / "mixed.py").write_text(MIXED)
    docs = {}
    for name, argv in {"rr": ["rr", "-p", "n=3"], "laplace": ["laplace"],
                       "gaussian": ["gaussian_mechanism", "--eps", "1"],
                       "mixed": [f"{folder / 'mixed.py'}:alg", "--size", "2", "--domain", "0..2",
                                 "--neighbours", "all_differ"]}.items():
        path = folder / f"{name}.json"
        assert main(["prove", *argv, "--out", str(path)]) == 0
        assert main(["certify", str(path)]) == 0
        docs[name] = json.loads(path.read_text())
    return docs


def _set(*keys: Any, value: Any) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        for k in keys[:-1]:
            doc = doc[k]
        doc[keys[-1]] = value
    return change


def _drop(*keys: Any) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        for k in keys[:-1]:
            doc = doc[k]
        del doc[keys[-1]]
    return change


def _numbers(key: str) -> list[tuple[str, Any]]:
    """Values no eps, delta or ratio may have (a raw value is written into the JSON text as is)."""
    return [(f"{key}=inf", "inf"), (f"{key}=Infinity", (RAW, "Infinity")), (f"{key}=1e400", (RAW, "1e400")),
            (f"{key}=10^400", (RAW, HUGE)), (f"{key}='10^400'", HUGE), (f"{key}=1/0", "1/0"),
            (f"{key}=NaN", (RAW, "NaN"))]


HOSTILE = [
    # delta outside [0, 1]: "confirmed ... delta <= -1" before
    *[("rr", label, _set("delta", value=v)) for label, v in
      [("delta=-1", "-1"), ("delta=-1 (number)", -1), ("delta=2", 2), *_numbers("delta")]],
    ("gaussian", "delta=2", _set("delta", value=2)),
    ("gaussian", "delta=10^400", _set("delta", value=HUGE)),
    ("laplace", "delta=-1", _set("delta", value="-1")),
    # eps negative, infinite, beyond every double, 1/0, NaN
    *[("laplace", label, _set("eps", value=v)) for label, v in [("eps=-1", "-1"), *_numbers("eps")]],
    *[("rr", label, _set("eps", value=v)) for label, v in _numbers("eps")],
    *[("gaussian", label, _set("eps", value=v)) for label, v in [("eps=-1", -1), *_numbers("eps")]],
    # ratio: below 1, infinite, above e^eps, 1/0, NaN; on a rule whose proofs have none
    *[("rr", label, _set("ratio", value=v)) for label, v in [("ratio=-1", "-1"), ("ratio=1/2", "1/2"),
                                                             *_numbers("ratio")]],
    ("gaussian", "ratio on a Gaussian proof", _set("ratio", value="3")),
    ("gaussian", "ratio=inf on a Gaussian proof", _set("ratio", value="inf")),
    ("gaussian", "ratio=10^400 on a Gaussian proof", _set("ratio", value=HUGE)),
    ("laplace", "ratio on an alignment proof", _set("ratio", value="2")),
    # eps_upper is what eps rounds up to, nothing else
    ("laplace", "eps_upper=junk", _set("eps_upper", value="junk")),
    ("laplace", "eps_upper=NaN", _set("eps_upper", value=(RAW, "NaN"))),
    ("rr", "eps_upper=-1", _set("eps_upper", value=-1)),
    # unknown keys and wrong types: a proof file is a contract
    ("rr", "unknown top-level key", _set("note", value="trust me")),
    ("laplace", "unknown evidence key", _set("evidence", "junk", value=1)),
    ("gaussian", "unknown evidence key", _set("evidence", "junk", value=1)),
    ("laplace", "solver not text", _set("solver", value=[])),
    ("laplace", "checked not a bool", _set("checked", value="yes")),
    # malformed evidence
    ("rr", "evidence={}", _set("evidence", value={})),
    ("rr", "no classes", _drop("evidence", "classes")),
    ("rr", "classes junk", _set("evidence", "classes", value="junk")),
    ("rr", "class not an object", _set("evidence", "classes", value=[1])),
    ("rr", "parts=5", _set("evidence", "parts", value=5)),
    ("rr", "a part names no class", _set("evidence", "parts", 0, "class", value=9)),
    ("rr", "sub_eps=NaN", _set("evidence", "sub_eps", value=(RAW, "NaN"))),
    ("laplace", "no paths", _drop("evidence", "paths")),
    ("laplace", "evidence eps=1/0", _set("evidence", "eps", value="1/0")),
    ("laplace", "decisions a list", _set("evidence", "paths", 0, "decisions", value=[1])),
    ("laplace", "shift input not an index", _set("evidence", "paths", 0, "shifts", "1", "d", value={"x": "1"})),
    ("gaussian", "no sensitivity", _drop("evidence", "sensitivity_squared")),
    ("gaussian", "sensitivity=1e400", _set("evidence", "sensitivity_squared", value=(RAW, "1e400"))),
    ("gaussian", "sigma junk", _set("evidence", "sigma", value="junk")),
    # a part's proof inside a composition is read as any proof is
    ("mixed", "part proof delta=-1", _set("evidence", "classes", 1, "proof", "delta", value="-1")),
    ("mixed", "part proof eps=1/0", _set("evidence", "classes", 1, "proof", "eps", value="1/0")),
    ("mixed", "part proof unknown key", _set("evidence", "classes", 1, "proof", "note", value=1)),
    ("mixed", "part proof evidence={}", _set("evidence", "classes", 1, "proof", "evidence", value={})),
    ("mixed", "class eps=NaN", _set("evidence", "classes", 1, "eps", value=(RAW, "NaN"))),
]


def _write(path: Path, doc: dict, change: Callable[[dict], None]) -> str:
    doc = copy.deepcopy(doc)
    raw: list[str] = []

    def marked(v: Any) -> Any:  # (RAW, text) -> a marker replaced by text in the JSON
        if isinstance(v, tuple) and v[:1] == (RAW,):
            raw.append(v[1])
            return f"{RAW}{len(raw) - 1}"
        if isinstance(v, dict):
            return {k: marked(e) for k, e in v.items()}
        return [marked(e) for e in v] if isinstance(v, list) else v

    change(doc)
    text = json.dumps(marked(doc))
    for i, literal in enumerate(raw):
        text = text.replace(f'"{RAW}{i}"', literal)
    path.write_text(text)
    return text


@pytest.mark.parametrize("name, label, change", HOSTILE, ids=[f"{n}: {label}" for n, label, _ in HOSTILE])
def test_a_hostile_proof_file_is_refused_on_one_line(capsys, tmp_path, proofs, name, label, change):
    path = tmp_path / "hostile.json"
    text = _write(path, proofs[name], change)
    for argv in (["certify", str(path)], ["certify", str(path), "--json"]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and not out, (label, code, out)
        assert len(err.strip().splitlines()) == 1 and err.startswith("dphybrid: error: "), err
        assert "not a well-formed proof" in err and "Traceback" not in err, err
    assert path.read_text() == text  # never modified


def test_the_api_raises_dphybrid_errors_not_overflow(proofs):
    """``recheck`` (what ``certify`` runs) raised OverflowError for eps = 10^400 and
    ZeroDivisionError for 1/0; now a ProofFileError, a DPHybridError."""
    for key, value in [("eps", int(HUGE)), ("eps", "1/0"), ("delta", math.nan), ("ratio", "1/0")]:
        doc = copy.deepcopy(proofs["rr"])
        doc[key] = value
        with pytest.raises(ProofFileError, match="not a well-formed proof"):
            recheck(doc, "p.json")
    assert issubclass(ProofFileError, DPHybridError)


def test_a_rejected_proof_exits_non_zero(capsys, tmp_path, proofs):
    """A well-formed proof whose claim does not check is REJECTED with exit status 1 (it exited 0,
    as though the proof held); the docs promise 0 only for a confirmed proof."""
    doc = copy.deepcopy(proofs["laplace"])  # 0.1-DP, claimed 1/20-DP with the same shift
    doc["eps"] = doc["evidence"]["eps"] = doc["evidence"]["paths"][0]["cost"] = "1/20"
    doc["eps_upper"] = 0.05
    path = tmp_path / "half.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "certify", str(path))
    assert code == REJECTED == 1 and "REJECTED" in out and not err
    code, out, _ = run(capsys, "certify", str(path), "--json")
    assert code == REJECTED and json.loads(out)["confirmed"] is False


CLAIMS = [  # what the evidence says of the program and its paths is checked, not only its shape
    ("laplace", "a path's cost understated", _set("evidence", "paths", 0, "cost", value="1/20"), "cost"),
    ("laplace", "the draw's scale", _set("evidence", "draws", "1", "scale", value="20"), "draws"),
    ("laplace", "the neighbour relation", _set("evidence", "neighbours", value="all_differ"), "neighbours"),
    ("gaussian", "sigma", _set("evidence", "sigma", "1", value="2"), "sigma"),
    ("mixed", "a class's rule", _set("evidence", "classes", 1, "rule", value="gaussian"), "rule"),
]


@pytest.mark.parametrize("name, label, change, says", CLAIMS, ids=[c[1] for c in CLAIMS])
def test_what_the_evidence_says_is_checked(capsys, tmp_path, proofs, name, label, change, says):
    """Each of these edits was confirmed before: the checker ignored the field."""
    path = tmp_path / "edited.json"
    _write(path, proofs[name], change)
    code, out, err = run(capsys, "certify", str(path))
    assert code == REJECTED and "REJECTED" in out and says in out and not err, (label, out, err)


PLAIN = '''
import numpy as np


def alg(prng, queries, epsilon):
    q = np.asarray(queries)
    return int(q[0] >= 2) ^ int(prng.random() < 0.25)
'''


def test_certify_rechecks_a_proof_of_a_plain_function(capsys, tmp_path):
    """``prove file.py:alg --out`` then ``certify``: the file keeps the function's inputs and the
    re-check traces the function with them (it said "unknown mechanism" before)."""
    source = tmp_path / "alg.py"
    source.write_text(PLAIN)
    path = tmp_path / "p.json"
    code, out, _ = run(capsys, "prove", f"{source}:alg", "--size", "1", "--domain", "0..3", "--neighbours",
                       "one_differ", "--out", str(path))
    assert code == 0 and "e^eps = 3" in out
    doc = json.loads(path.read_text())
    assert doc["inputs"] == {"size": 1, "domain": [0, 3], "neighbours": "one_differ"}
    code, out, err = run(capsys, "certify", str(path))
    assert code == 0 and "confirmed" in out and "{0..3}^1" in out, out + err
    # the inputs are used: over 0..1 the output reads no query (q[0] >= 2 is always false): not this proof
    narrow = tmp_path / "narrow.json"
    narrow.write_text(json.dumps(doc | {"inputs": {"size": 1, "domain": [0, 1], "neighbours": "one_differ"}}))
    code, out, _ = run(capsys, "certify", str(narrow))
    assert code == REJECTED and "REJECTED" in out and "{0..1}^1" not in out
    # a proof of a function without its inputs, with junk in them, of a function gone or renamed
    cases = {"no inputs": ({k: v for k, v in doc.items() if k != "inputs"}, "must give its inputs"),
             "junk in inputs": (doc | {"inputs": doc["inputs"] | {"seed": 1}}, "unknown key 'seed'"),
             "no such function": (doc | {"mechanism": f"{source}:gone"}, "has no function 'gone'"),
             "no such file": (doc | {"mechanism": f"{tmp_path / 'gone.py'}:alg"}, "no such file")}
    for label, (bad, says) in cases.items():
        path.write_text(json.dumps(bad))
        code, out, err = run(capsys, "certify", str(path))
        assert code == 2 and not out and len(err.strip().splitlines()) == 1 and says in err, (label, err)


def test_search_says_contradictory_bounds_on_one_line(capsys, monkeypatch):
    """A proved upper bound below the certified lower bound is a bug; the search refuses to report
    either, on one line with exit status 2 (it was a RuntimeError traceback)."""
    from verifiers.prover.proof import Proof

    wrong = Proof(rule="composition", mechanism="rr", params={}, eps=0.5, evidence={}, checked=True)
    monkeypatch.setattr("verifiers.prover.prove.prove", lambda *a, **k: wrong)
    code, out, err = run(capsys, "search", "rr", "-p", "n=2", "--samples", "20000", "--no-global", "--json")
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "unsound" in err and "Traceback" not in err, err
