"""The CLI's start-up stays light: building the parser and listing mechanisms import none of
the heavy libraries (they are imported by the commands that use them).  A structural
check on ``sys.modules`` in a fresh interpreter, not a timing assertion."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "numba", "scipy", "sklearn", "z3", "dd", "matplotlib", "flint", "mpmath", "joblib", "dask")

PROBE = """
import json, sys
from hybrid.cli import build_parser, main
build_parser()
{extra}
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))
"""


@pytest.mark.parametrize(("extra", "allowed"), [
    ("", ()),
    ("import hybrid; hybrid.__all__", ()),
    ("main(['list'])", ("numpy",)),  # list reads the library black boxes' table, built on numpy
])
def test_parser_and_list_import_no_heavy_library(extra: str, allowed: tuple[str, ...]) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE.format(extra=extra)], capture_output=True, text=True,
                         check=True).stdout
    heavy = (set(json.loads(out.strip().splitlines()[-1])) & set(HEAVY)) - set(allowed)
    assert not heavy, sorted(heavy)


def test_public_api_still_loads_on_use() -> None:
    import importlib

    import hybrid

    for submodule in ("hybrid.searcher.certify", "hybrid.searcher.search"):  # imported first, they must
        importlib.import_module(submodule)  # not shadow the functions of the same name
    assert callable(getattr(hybrid, "search")) and callable(getattr(hybrid, "certify"))
    assert hybrid.Budget().samples > 0
    with pytest.raises(AttributeError):
        hybrid.no_such_name  # noqa: B018


def test_a_command_imports_its_own_module_only() -> None:
    probe = ("import json, sys\nfrom hybrid.cli import build_parser\nbuild_parser('dist')\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hybrid.cli.'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    modules = set(json.loads(out.strip().splitlines()[-1]))
    assert "hybrid.cli.dist" in modules
    assert not modules & {"hybrid.cli.suite", "hybrid.cli.search", "hybrid.cli.sample", "hybrid.cli.testing"}


def test_the_parser_of_one_command_says_what_the_full_parser_says(capsys) -> None:
    """``main`` builds the parser of the command it runs alone: the same help and the same errors."""
    from hybrid.cli import COMMANDS, build_parser

    def said(parser, words: list[str]) -> tuple:
        with pytest.raises(SystemExit) as e:
            parser.parse_args(words)
        out, err = capsys.readouterr()
        return e.value.code, out, err

    full = build_parser()
    for name in COMMANDS:
        for words in ([name, "--help"], [name, "--no-such-option"]):
            assert said(build_parser(name), words) == said(full, words), words


def test_the_console_command_spares_its_exit_the_garbage_collections() -> None:
    """Run as the console command (no argv), main freezes the heap for the shutdown; called with an argv
    (as tests and the API do) it leaves the collector alone."""
    probe = ("import gc, sys\nfrom hybrid.cli import main\nmain(['list', '--json'])\nafter_api = gc.get_freeze_count()\n"
             "sys.argv = ['dphybrid', 'list', '--json']\nmain()\nprint(after_api, gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    after_api, after_console = map(int, out.strip().splitlines()[-1].split())
    assert after_api == 0 and after_console > 0
