"""Reading files a user hands us (witnesses, models, suites): one-line errors, never a traceback.

A path may name a directory, a device, a binary or non-UTF-8 file, or JSON nested deeply
enough to exhaust Python's recursion limit; each becomes the caller's
:class:`~samplers.errors.DPHybridError` subclass with a message naming the file and the
problem.  Parsed documents are limited to :data:`MAX_DEPTH` levels of nesting, checked
without recursion, so code that walks them recursively cannot overflow the stack.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from samplers.errors import DPHybridError
from samplers.numerals import is_integer, read_error_text

MAX_DEPTH = 64  # nesting levels of lists and objects in a user file (ours use at most 6)
MAX_BYTES = 32 * 2**20  # a witness, proof or model file this large is not one (ours are kilobytes to a few MiB)


def short_repr(v: Any, limit: int = 80) -> str:
    """``repr(v)`` cut to ``limit`` characters, for error messages about a file's values."""
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def as_object(v: Any, where: str, *, error: type[DPHybridError] = DPHybridError) -> dict[str, Any]:
    """``v`` if it is a JSON object (a dict), else a one-line error naming ``where``."""
    if not isinstance(v, dict):
        raise error(f"{where} must be an object, got {short_repr(v)}")
    return v


def as_list(v: Any, where: str, *, error: type[DPHybridError] = DPHybridError) -> list[Any]:
    """``v`` if it is a JSON list, else a one-line error naming ``where``."""
    if not isinstance(v, list):
        raise error(f"{where} must be a list, got {short_repr(v)}")
    return v


def as_int(v: Any, where: str, *, error: type[DPHybridError] = DPHybridError) -> int:
    """An integer given as a JSON integer or as decimal text (object keys are text), not a bool."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and is_integer(v):
        return int(v)
    raise error(f"{where} must be an integer, got {short_repr(v)}")


def read_text(path: str | Path, *, error: type[DPHybridError] = DPHybridError) -> str:
    """The UTF-8 text of a regular file (not a directory, a FIFO or a device) of at most :data:`MAX_BYTES`."""
    p = Path(path)
    try:
        if not p.exists():
            raise error(f"no such file: {path}")
        if not p.is_file():
            raise error(f"{path} is not a regular file")
        if p.stat().st_size > MAX_BYTES:
            raise error(f"{path} is {p.stat().st_size} bytes, more than the {MAX_BYTES} a file we read may have")
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{path} is not UTF-8 text (byte {e.start}: {e.reason})") from None
    except OSError as e:
        raise error(f"cannot read {path}: {e.strerror or e}") from None


def check_depth(data: Any, where: str, *, error: type[DPHybridError] = DPHybridError) -> Any:
    """``data`` itself, after checking that lists and objects nest at most :data:`MAX_DEPTH` deep."""
    stack = [(data, 1)]
    while stack:
        v, depth = stack.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
        for c in children:
            if isinstance(c, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    raise error(f"{where}: nested more than {MAX_DEPTH} levels deep")
                stack.append((c, depth + 1))
    return data


def parse_json(text: str, where: str, *, error: type[DPHybridError] = DPHybridError) -> Any:
    """A JSON document (``NaN`` and ``Infinity`` accepted as Python reads them), depth-checked."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{where}: not valid JSON ({e})") from None
    except ValueError as e:  # an integer beyond Python's int-string limit
        raise error(f"{where}: cannot read a value ({read_error_text(e)})") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply to read") from None
    return check_depth(data, where, error=error)


def read_json(path: str | Path, *, error: type[DPHybridError] = DPHybridError) -> Any:
    """:func:`read_text` then :func:`parse_json`."""
    return parse_json(read_text(path, error=error), os.fspath(path), error=error)
