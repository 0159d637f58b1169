"""Crash-safe JSONL result files: one line per finished entry, flushed and fsynced.

A run killed mid-write can leave a partial last line; :func:`read_results` drops it
(and :func:`open_for_append` truncates it) so a resumed run neither loses finished
rows nor keeps a broken one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, IO

from samplers.errors import DPHybridError


class ResultsFileError(DPHybridError):
    """A results file is unreadable or not in dphybrid's JSONL format."""


def _good_prefix(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The parsed complete lines and the byte length they occupy."""
    rows, end = [], 0
    data = path.read_bytes()
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break  # a partial line from an interrupted write
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if end + len(line) == len(data):
                break  # garbage only at the very end: an interrupted write
            raise ResultsFileError(f"{path}: line {len(rows) + 1} is not JSON") from None
        if not isinstance(row, dict) or "id" not in row:
            raise ResultsFileError(f"{path}: line {len(rows) + 1} is not a dphybrid result row")
        rows.append(row)
        end += len(line)
    return rows, end


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The complete rows of a results file."""
    p = Path(path)
    if not p.is_file():
        raise ResultsFileError(f"no results file {p}")
    return _good_prefix(p)[0]


def open_for_append(path: str | Path, resume: bool) -> tuple[IO[str], list[dict[str, Any]]]:
    """Open ``path`` for appending rows; with ``resume`` also return the rows already there.

    Without ``resume`` an existing non-empty file is an error: nothing is overwritten.
    """
    p = Path(path)
    rows: list[dict[str, Any]] = []
    if p.exists() and p.stat().st_size:
        if not resume:
            raise ResultsFileError(f"{p} already exists: pass --resume to continue it, or choose another file")
        rows, end = _good_prefix(p)
        with open(p, "r+b") as f:
            f.truncate(end)
    p.parent.mkdir(parents=True, exist_ok=True)
    return open(p, "a", encoding="utf-8"), rows


def append_row(f: IO[str], row: dict[str, Any]) -> None:
    """Write one row durably: a single write, flushed and fsynced."""
    f.write(json.dumps(row, separators=(",", ":")) + "\n")
    f.flush()
    os.fsync(f.fileno())
