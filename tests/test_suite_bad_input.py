"""Bad input to ``suite`` and ``report``: one line on stderr, exit 2, no traceback, no file changed."""

from pathlib import Path

import pytest

from hybrid.cli import main
from hybrid.suites.results_log import row_line

GOOD_ROW = row_line({"id": "trunc_geom", "index": 0, "entry": {"mechanism": "trunc_geom", "params": {}},
                     "status": "ok", "result": {"eps_lower": 0.69, "ratio": "2"}, "error": None,
                     "worker": "h:1", "elapsed": 0.4})
DEEP = b"[" * 100_000 + b"]" * 100_000


def _row(result: str, params: str = "{}", elapsed: str = "1") -> bytes:
    """An ok row of ours but for ``result`` (and ``params``, ``elapsed``), as written to the file."""
    return ('{"id":"x","entry":{"mechanism":"rr","params":' + params + '},"status":"ok",' + result
            + ',"elapsed":' + elapsed + "}\n").encode()


def _toml(line: str, where: str = "entry") -> bytes:
    if where == "defaults":
        return f'[defaults]\n{line}\n[[entry]]\nmechanism = "trunc_geom"\n'.encode()
    return f'[[entry]]\nmechanism = "trunc_geom"\n{line}\n'.encode()


def _json(field: str) -> bytes:
    return ('{"entry": [{"mechanism": "trunc_geom", ' + field + "}]}").encode()


SUITE_FILES = {
    "precision nan": _toml("precision = nan"),
    "precision inf": _toml("precision = inf"),
    "precision 1e300": _toml("precision = 1e300"),
    "precision 0": _toml("precision = 0"),
    "defaults precision nan": _toml("precision = nan", "defaults"),
    "budget nan": _toml("budget = nan"),
    "budget inf": _toml("budget = inf"),
    "budget 1e300": _toml("budget = 1e300"),
    "budget -1": _toml("budget = -1"),
    "defaults budget inf": _toml("budget = inf", "defaults"),
    "time_limit 0": _toml("time_limit = 0"),
    "time_limit nan": _toml("time_limit = nan"),
    "claimed_eps nan": _toml("claimed_eps = nan"),
    "claimed_eps -1": _toml("claimed_eps = -1"),
    "claimed_eps inf": _toml("claimed_eps = inf"),
    "seed -1": _toml("seed = -1"),
    "samples 10^20": _toml("samples = 100000000000000000000"),
    "samples 10^11": _toml("samples = 100000000000"),
    "cost 0": _toml("cost = 0"),
    "cost nan": _toml("cost = nan"),
    "cost a string": _toml('cost = "high"'),
    "id a list": _toml('id = ["x"]'),
    "reference dpsniper a string": _toml('reference = { dpsniper = "abc" }'),
    "reference exact_ratio garbage": _toml('reference = { exact_ratio = "abc" }'),
    "reference exact_ratio negative": _toml('reference = { exact_ratio = "-2" }'),
    "deep TOML": b"a = " + DEEP,
    "json precision NaN": _json('"precision": NaN'),
    "json budget 1e400": _json('"budget": 1e400'),
    "json seed 2^64": _json('"seed": 18446744073709551616'),
    "json deep": DEEP,
    "not UTF-8": b'[[entry]]\nmechanism = "\xff"\n',
    # issue 24, items 5 and 12: 5000-digit integers as values and parameters; a table as the name
    "seed 5000 digits": _toml("seed = " + "1" * 5000),
    "params 5000 digits": _toml("params = { m = " + "1" * 5000 + " }"),
    "json budget 5000 digits": _json('"budget": ' + "1" * 5000),
    "json params 5000 digits": _json('"params": {"m": ' + "1" * 5000 + "}"),
    "claimed_eps 4000 digits": _toml("claimed_eps = " + "1" * 4000),
    "precision 5": _toml("precision = 5"),
    "name a table": b'name = { a = 1 }\n[[entry]]\nmechanism = "trunc_geom"\n',
    "description a list": b'description = [1]\n[[entry]]\nmechanism = "trunc_geom"\n',
}

ROW_FILES = {
    "id only": b'{"id":"x"}\n',
    "id a list": b'{"id":["x"],"entry":{"mechanism":"rr"},"status":"ok","result":{},"elapsed":1}\n',
    "result a string": b'{"id":"x","entry":{"mechanism":"rr"},"status":"ok","result":"r","elapsed":1}\n',
    "status unknown": b'{"id":"x","entry":{"mechanism":"rr"},"status":"fine","result":{},"elapsed":1}\n',
    "eps_lower a word": b'{"id":"x","entry":{"mechanism":"rr"},"status":"ok","result":{"eps_lower":"big"},'
                        b'"elapsed":1}\n',
    "ratio garbage": b'{"id":"x","entry":{"mechanism":"rr"},"status":"ok","result":{"ratio":"1/0"},"elapsed":1}\n',
    "reference dpsniper a string": b'{"id":"x","entry":{"mechanism":"rr","reference":{"dpsniper":"a"}},'
                                   b'"status":"error","result":null,"elapsed":1}\n',
    "NaN": b'{"id":"x","entry":{"mechanism":"rr"},"status":"error","result":null,"elapsed":NaN}\n',
    "invalid UTF-8": b'{"id":"\xff\xfe","entry":{"mechanism":"rr"},"status":"error","result":null,"elapsed":1}\n',
    "deep": DEEP + b"\n",
    "foreign text": b"important notes\n",
    "one JSON line without newline": b'{"a": 1}',
    "good row then foreign text": GOOD_ROW + b"important notes",
    # issue 24, items 7 and 14: rows that are not results the suite wrote
    "limits_hit a string": _row('"result":{"eps_lower":0.5,"limits_hit":"time"}'),
    "limits_hit a list of numbers": _row('"result":{"eps_lower":0.5,"limits_hit":[1,2]}'),
    "eps_lower 1e400 beside ratio 3": _row('"result":{"eps_lower":1e400,"ratio":"3","certified":true}'),
    "eps_lower above its ratio": _row('"result":{"eps_lower":5.0,"ratio":"3","certified":true}'),
    "eps_lower -5": _row('"result":{"eps_lower":-5,"certified":true}'),
    "witness abc": _row('"result":{"eps_lower":0.5,"witness":{"x":"abc","x_prime":null}}'),
    "params nested": _row('"result":{"eps_lower":0.5}', params='{"m":{"a":[1]}}'),
    "elapsed 300 digits": _row('"result":{"eps_lower":0.5}', elapsed="9" * 300),
}

CASES = (
    [(f"suite file: {k}", {"s.toml" if not k.startswith("json") else "s.json": v},
      ["suite", "{d}/" + ("s.toml" if not k.startswith("json") else "s.json")]) for k, v in SUITE_FILES.items()]
    + [(f"report: {k}", {"r.jsonl": v}, ["report", "{d}/r.jsonl"]) for k, v in ROW_FILES.items()]
    + [(f"resume: {k}", {"r.jsonl": v}, ["suite", "{d}/good.toml", "--out", "{d}/r.jsonl", "--resume"])
       for k, v in ROW_FILES.items()]
    + [(f"flag: {' '.join(flags)}", {}, ["suite", "{d}/good.toml", *flags]) for flags in [
        ["--time-budget", "0"], ["--time-budget", "-1"], ["--time-budget", "nan"], ["--time-budget", "inf"],
        ["--time-budget", "1e300"], ["--precision", "nan"], ["--precision", "1e300"], ["--precision", "-1"],
        ["--time-limit", "0"], ["--time-limit", "inf"], ["--jobs", "0"], ["--jobs", "-1"],
        ["--out", "{d}/dir"], ["--out", "{d}/dir", "--resume"], ["--out", "/proc/dphybrid.jsonl"],
        ["--out", "/proc/self/status"], ["--out", "/proc/self/status", "--resume"],
        ["--out", "{d}/missing/r.jsonl"], ["--out", "{d}/results.jsonl"],
        ["--scheduler", "garbage", "--backend", "dask"], ["--out", "{d}/new.jsonl", "--scheduler", "garbage",
                                                           "--backend", "dask"],
        ["--scheduler", "tcp://127.0.0.1:8786"],
        ["--backend", "loky"], ["--out", "{d}/results.jsonl", "--retry-failed"], ["--resume"],
        ["--out", "{d}/notes.txt", "--resume"]]]
    + [("report: a directory", {}, ["report", "{d}/dir"]), ("report: an empty file", {"r.jsonl": b""},
                                                             ["report", "{d}/r.jsonl"])]
    # issue 24, items 6 and 12: plot paths checked before the table is printed
    + [(f"report --plot {p}", {}, ["report", "{d}/results.jsonl", "--plot", p])
       for p in ["{d}/x.zzz", "{d}/dir.json", "", "{d}/notes.txt", "{d}/no/such/p.png"]]
)


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("files, argv", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_no_file(tmp_path, capsys, files, argv):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "good.toml").write_text('[[entry]]\nmechanism = "trunc_geom"\n')
    (tmp_path / "results.jsonl").write_bytes(GOOD_ROW)
    (tmp_path / "notes.txt").write_text("important notes\n")
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    before = _snapshot(tmp_path)
    try:
        code = main([a.replace("{d}", str(tmp_path)) for a in argv])
    except SystemExit as e:  # argparse's own errors
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("dphybrid") and "Traceback" not in err, err
    assert len(err) < 600, "a long value is echoed back in full"
    assert out == "", "refused after printing"
    assert _snapshot(tmp_path) == before
