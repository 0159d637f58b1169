"""Results for people: a console and tables that lose nothing in a pipe, witness events as text.

On a terminal rich uses the terminal's width; in a pipe or a file it would use 80 columns
and cut long cells, so there it uses ``$COLUMNS`` or :data:`PIPE_WIDTH`, and table cells
fold onto more lines instead of being cut or ellipsized.  Witness events are read back from
their JSON form and described (``output[0] < 0 and ...``), attacks summarised.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Mapping

PIPE_WIDTH = 200  # columns of output that is not a terminal, unless $COLUMNS says otherwise


def width() -> int | None:
    """The width to render at: None (the terminal's) on a terminal, else ``$COLUMNS`` or :data:`PIPE_WIDTH`."""
    if sys.stdout.isatty():
        return None
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else PIPE_WIDTH


def console() -> Any:
    """A rich console on stdout at :func:`width`."""
    from rich.console import Console

    return Console(width=width())


def table(*headers: str, title: str | None = None) -> Any:
    """A rich table whose long cells fold onto more lines (nothing cut, no ellipsis)."""
    from rich.table import Table

    t = Table(title=title)
    for h in headers:
        t.add_column(h, overflow="fold", no_wrap=False)
    return t


def params_text(params: Mapping[str, Any]) -> str:
    """``m=5 a=1/2``."""
    return " ".join(f"{k}={v}" for k, v in params.items())


SHOWN_VALUES = 8  # a longer vector is shown by its first values and its length (JSON has it whole)
SHOWN_CHARACTERS = 300  # an event's text is cut there, its length said (a table cell: CELL_CHARACTERS)
CELL_CHARACTERS = 80


def vector_text(v: Any) -> str:
    """An input or output vector for people: ``[1, 1, ... (1000 values)]`` past :data:`SHOWN_VALUES`."""
    v = list(v)
    if len(v) <= SHOWN_VALUES:
        return str(v)
    return "[" + ", ".join(map(str, v[:SHOWN_VALUES])) + f", ... ({len(v):,} values)]"


def pair_text(x: Any, xp: Any) -> str:
    """``x = ..., x' = ...``; for long vectors, also where they differ (the rest is in the JSON)."""
    x, xp = list(x), list(xp)
    text = f"x = {vector_text(x)}, x' = {vector_text(xp)}"
    if max(len(x), len(xp)) <= SHOWN_VALUES or len(x) != len(xp):
        return text
    diff = [i for i, (a, b) in enumerate(zip(x, xp)) if a != b]
    shown = ", ".join(f"[{i}] {x[i]} vs {xp[i]}" for i in diff[:SHOWN_VALUES])
    more = f", ... ({len(diff):,} positions)" if len(diff) > SHOWN_VALUES else ""
    return f"{text}; they differ at {shown}{more}" if diff else text


def cut_text(text: str, limit: int = SHOWN_CHARACTERS) -> str:
    """``text`` cut at ``limit`` characters, its full length said."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters; --json has it whole)"


def event_text(event: Any) -> str:
    """A witness event, given in its JSON form, as text: ``output in {1}``, ``output[0] < 0.5``,
    an attack summarised; a form that cannot be read back is shown as compact JSON."""
    if event == []:
        return "none (no output set beat the whole output space)"
    from hybrid.testers.event_json import event_from_json
    from samplers.errors import DPHybridError

    try:
        return cut_text(event_from_json(event).describe())
    except DPHybridError:
        pass
    try:  # an attack that cannot be rebuilt (a custom transform) is still summarised
        from hybrid.testers.attack import attack_summary

        a = event["attack"]
        return attack_summary(str(a["model"]["kind"]), str(a["transform"]["name"]), float(a["t"]), float(a["q"]),
                              float(a["c"]))
    except (TypeError, KeyError, ValueError):
        from hybrid.formats import json_safe

        return cut_text(json.dumps(json_safe(event), separators=(", ", ": ")))
