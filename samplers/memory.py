"""Refuse allocations that cannot fit, before making them.

A size given by the user (``-n 10**12`` samples, ``-p m=10**9`` coordinates) is checked
against the memory this machine has available, so the answer is a one-line error naming
the size, never a ``MemoryError`` halfway or the kernel's out-of-memory killer.
"""

from __future__ import annotations

import math
import os

from samplers.numerals import count_text
from samplers.errors import BudgetExceeded

USABLE = 0.8  # share of the available memory one allocation may take


class TooLarge(BudgetExceeded):
    """A requested size needs more memory than the machine has available."""


def available_bytes() -> float:
    """Memory available to a new allocation (``MemAvailable``; ``inf`` when unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return math.inf


def human_bytes(n: float) -> str:
    """``7.3 TiB``, ``512 MiB``, ... (``about 10^3000 B`` beyond a float)."""
    if isinstance(n, int) and n >= 2**1000:
        return f"{count_text(n)} B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def allowed_bytes(limit: float | None = None) -> float:
    """The bytes one allocation may take: the usable share of the available memory, or ``limit`` when less."""
    usable = USABLE * available_bytes()
    return usable if limit is None else min(usable, max(0.0, limit))


def check_fits(nbytes: float, what: str, hint: str = "", limit: float | None = None) -> None:
    """Raise :class:`TooLarge` when ``nbytes`` exceed the usable share of available memory, or
    ``limit`` bytes when that is less (a limit the user set, less what the caller holds already).

    ``what`` names the size (``"10**12 samples of 1 value"``), ``hint`` the flag or
    parameter to lower; both end up in the one-line message.
    """
    cap = allowed_bytes(limit)
    if nbytes > cap:
        tail = f"; {hint}" if hint else ""
        where = "allowed" if limit is not None and cap == limit else "available"
        raise TooLarge(f"{what}: {human_bytes(nbytes)} needed, more than the {human_bytes(cap)} of memory "
                       f"{where}{tail}", limit="memory_bytes", value=int(cap))
