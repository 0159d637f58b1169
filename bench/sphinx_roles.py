"""MkDocs hook: Sphinx cross-reference roles in docstrings (``:class:`X```) shown as plain code.

The docstrings name other objects the Sphinx way; mkdocstrings renders the role's text
literally (``:class:<code>X</code>``), so the API reference pages drop the role prefix.
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|exc|obj):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    return ROLE.sub("", html)
