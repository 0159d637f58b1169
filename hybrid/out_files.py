"""Files a command writes: checked before the work, never clobbering what we did not write.

:func:`writable` checks an output path up front: its folder exists and is writable, and a
file already there is overwritten only if ``ours(path)`` says it is one of ours (a plot of
that format, a proof file), so a results file or a user's notes are never lost.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from samplers.errors import DPHybridError


def writable(p: Path, what: str, ours: Callable[[Path], bool], kind: str,
             error: type[DPHybridError] = DPHybridError) -> Path:
    """``p`` itself once checked; ``what`` names it in errors ("the plot"), ``kind`` says what ours are."""
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise error(f"cannot write {what} {p}: no folder {folder}")
    if p.exists() or p.is_symlink():
        if not p.is_file():
            raise error(f"cannot write {what} {p}: it exists and is not a regular file")
        if not ours(p):
            raise error(f"refusing to overwrite {p}: it is not {kind}")
    elif not os.access(folder, os.W_OK):
        raise error(f"cannot write {what} {p}: folder {folder} is not writable")
    return p
