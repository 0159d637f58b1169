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
