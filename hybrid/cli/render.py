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


def event_text(event: Any) -> str:
    """A witness event, given in its JSON form, as text: ``output in {1}``, ``output[0] < 0.5``,
    an attack summarised; a form that cannot be read back is shown as compact JSON."""
    if event == []:
        return "none (no output set beat the whole output space)"
    from hybrid.testers.event_json import event_from_json
    from samplers.errors import DPHybridError

    try:
        return event_from_json(event).describe()
    except DPHybridError:
        pass
    try:  # an attack that cannot be rebuilt (a custom transform) is still summarised
        from hybrid.testers.attack import attack_summary

        a = event["attack"]
        return attack_summary(str(a["model"]["kind"]), str(a["transform"]["name"]), float(a["t"]), float(a["q"]),
                              float(a["c"]))
    except (TypeError, KeyError, ValueError):
        from hybrid.formats import json_safe

        return json.dumps(json_safe(event), separators=(", ", ": "))
