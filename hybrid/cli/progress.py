"""Progress on a terminal: a rich status line, silent under ``--json`` or when not a TTY."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator


@contextlib.contextmanager
def progress_reporter(quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A ``say(message)`` callback that updates a spinner on stderr while the block runs."""
    if quiet or not sys.stderr.isatty():
        yield lambda message: None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("starting") as status:
        yield lambda message: status.update(message)
