"""The hybrid engine: testing proposes witnesses, exact backends certify them.

Three stages, one subpackage each, with the command line on top (``hybrid.cli``):
``hybrid.testers`` (statistical testers) -> ``hybrid.searcher`` (certified search)
-> ``hybrid.suites`` (parallel suite runs and reports).  ``formats``, ``inputs``,
``out_files``, ``seeds`` and ``timing`` are shared by all three.

``search`` finds a certified lower bound on a mechanism's epsilon; ``certify`` computes
the exact ratio of a witness (ours, StatDP's, or an exported classifier attack).  The
names are loaded on first use, so that ``import hybrid.cli`` (every command's start)
does not pay for the testers' and verifiers' imports.
"""

from __future__ import annotations

import importlib
from typing import Any

_SEARCH, _CERTIFY = "hybrid.searcher.search", "hybrid.searcher.certify"
_EXPORTS = {
    "Budget": "hybrid.searcher.budget", "SearchResult": _SEARCH, "search": _SEARCH,
    "Certificate": _CERTIFY, "Witness": _CERTIFY, "certify": _CERTIFY, "certify_file": _CERTIFY,
    "load_witnesses": _CERTIFY,
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'hybrid' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
