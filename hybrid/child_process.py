"""What every forked child of ours does first: die with its parent."""

from __future__ import annotations

import ctypes
import signal


def die_with_parent() -> None:
    """Ask Linux to kill this child when its parent dies (a killed command leaves no worker behind)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
