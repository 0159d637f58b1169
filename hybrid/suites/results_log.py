"""Crash-safe JSONL result files: one line per finished entry, flushed and fsynced.

Only files that are wholly ours are read or written: every complete line must be a
result row (see :func:`row_problem`), and the one thing a resume may cut is a last
line that is an unfinished row of ours (a run killed mid-write).  Anything else (a
foreign file, a hand-edited line, a JSON document without its newline) is an error
and the file stays byte for byte as it was.  A writer holds an exclusive ``flock`` on
the file for its whole run, so a second writer is refused instead of duplicating rows.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import stat
from pathlib import Path
from typing import Any, Sequence

from hybrid.formats import json_safe
from hybrid.suites.suite_file import SuiteError, check_claimed_delta, check_claimed_eps, check_reference
from samplers.errors import DPHybridError
from samplers.readers import short_repr
from verifiers.epsilon import eps_lower, eps_upper
from verifiers.ratio import parse_ratio

STATUSES = ("ok", "error", "timeout")
MAX_ROW_BYTES = 32 * 2**20  # one row: a result with its candidates is kilobytes; a longer line is not ours
MAX_RESULTS_BYTES = 1024 * 2**20  # a whole results file (some 10^5 entries), checked before it is read
MAX_ELAPSED = 1e9  # seconds (thirty years): an entry's time beyond it is not one we measured
_ROW_START = b'{"id":'  # every row we write starts so (compact JSON, "id" first)
_BARE = frozenset('{}[]:,-+.0123456789eEtrufalsn')  # what compact JSON has outside strings


class ResultsFileError(DPHybridError):
    """A results file is unreadable, locked by another run, or not in dphybrid's JSONL format."""


def row_line(row: dict[str, Any]) -> bytes:
    """The one line a row is stored as (compact, valid JSON: never NaN or Infinity)."""
    return (json.dumps(json_safe(row), separators=(",", ":"), allow_nan=False) + "\n").encode()


LEVEL_SLACK = 0.01  # a certified eps_lower is its ratio's level rounded down: a row 1 % (+ 0.01) below it contradicts itself


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v: Any) -> bool:
    return _is_number(v) and math.isfinite(v)


def _int_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(e, int) and not isinstance(e, bool) for e in v)


def _result_problem(r: dict[str, Any]) -> str | None:
    """What is wrong with the fields of a search result that reports read, if anything: a
    bound must be a number, a witness its inputs, and a lower bound must not exceed the
    level of the exact ratio beside it (a row claiming more than its ratio is not ours)."""
    low, up = r.get("eps_lower"), r.get("eps_upper")
    for name, bound in (("eps_lower", low), ("eps_upper", up)):
        if bound is not None and bound != "inf" and not (_finite(bound) and bound >= 0):
            return f"result.{name} must be a finite non-negative number or \"inf\""
    low_v, up_v = (None if b is None else math.inf if b == "inf" else b for b in (low, up))
    ratio = r.get("ratio")
    if ratio is not None:
        try:
            value = parse_ratio(ratio) if isinstance(ratio, str) else None
        except DPHybridError:
            value = None
        if value is None or value < 0:
            return "result.ratio must be a ratio such as \"288/73\" or \"inf\""
        if low_v is not None and low_v > eps_upper(value):
            return f"result.eps_lower {short_repr(low)} exceeds the level of result.ratio {short_repr(ratio)}"
        if low_v is not None and eps_lower(value) > low_v * (1 + LEVEL_SLACK) + LEVEL_SLACK:
            return f"result.ratio {short_repr(ratio)} is far above the level of result.eps_lower {short_repr(low)}"
    if up_v is not None and low_v is not None and up_v < low_v:
        return f"result.eps_upper {short_repr(up)} is below result.eps_lower {short_repr(low)}: the row contradicts itself"
    for where, params in (("result.params", r.get("params")),
                          ("result.witness.params", (r.get("witness") or {}).get("params"))):
        problem = None if params is None else _params_problem(params, where)
        if problem:
            return problem
    limits = r.get("limits_hit")
    if limits is not None and not (isinstance(limits, list) and all(isinstance(v, str) for v in limits)):
        return "result.limits_hit must be a list of strings"
    stat_ = r.get("stat_interval")
    if stat_ is not None and not (isinstance(stat_, list) and len(stat_) == 2
                                  and all(_is_number(v) or v in ("inf", "-inf") for v in stat_)):
        return "result.stat_interval must be a pair of numbers"
    w = r.get("witness")
    if w is not None and not (isinstance(w, dict) and _int_list(w.get("x")) and _int_list(w.get("x_prime"))):
        return "result.witness must be an object with the inputs x and x_prime (lists of integers)"
    return None


def _params_problem(params: Any, where: str = "entry.params") -> str | None:
    if not isinstance(params, dict):
        return f"'{where}' must be an object"
    for k, v in params.items():
        if not (isinstance(v, (str, bool, int)) or _finite(v)):
            return f"'{where}' value {k}={short_repr(v)} is not a number, string or boolean"
    return None


def row_problem(row: Any) -> str | None:
    """What makes ``row`` not a result row of ours, or None when it is one."""
    if not isinstance(row, dict):
        return "is not a JSON object"
    if not isinstance(row.get("id"), str) or not row["id"]:
        return "'id' must be a non-empty string"
    index = row.get("index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool) or index < 0):
        return "'index' must be a non-negative integer"
    entry = row.get("entry")
    if not isinstance(entry, dict) or not isinstance(entry.get("mechanism"), str):
        return "'entry' must be an object naming its mechanism"
    problem = _params_problem(entry.get("params", {}))
    if problem:
        return problem
    try:
        check_claimed_delta(entry.get("claimed_delta"),
                            check_claimed_eps(entry.get("claimed_eps"), "entry.claimed_eps"), "entry.claimed_delta")
        check_reference(entry.get("reference", {}), "entry.reference")
    except SuiteError as e:
        return str(e)
    if row.get("status") not in STATUSES:
        return f"'status' must be one of {', '.join(STATUSES)}"
    result = row.get("result")
    if row["status"] == "ok" and not isinstance(result, dict):
        return "'result' must be an object in an ok row"
    if result is not None:
        if not isinstance(result, dict):
            return "'result' must be an object or null"
        problem = _result_problem(result)
        if problem:
            return problem
    if row.get("error") is not None and not isinstance(row["error"], str):
        return "'error' must be a string or null"
    elapsed = row.get("elapsed")
    if not _is_number(elapsed) or not 0 <= elapsed <= MAX_ELAPSED:
        return f"'elapsed' must be a number of seconds in [0, {MAX_ELAPSED:g}]"
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_line(line: bytes, where: str) -> dict[str, Any]:
    """One complete line as a row, or a one-line ResultsFileError."""
    if len(line) > MAX_ROW_BYTES:
        raise ResultsFileError(f"{where} is {len(line):,} bytes long: no dphybrid result row is (at most "
                               f"{MAX_ROW_BYTES // 2**20} MiB)")
    try:
        row = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise ResultsFileError(f"{where} is not UTF-8 text: not a dphybrid results file") from None
    except RecursionError:
        raise ResultsFileError(f"{where} is nested too deeply: not a dphybrid results file") from None
    except ValueError:
        raise ResultsFileError(f"{where} is not JSON: not a dphybrid results file") from None
    problem = row_problem(row)
    if problem:
        raise ResultsFileError(f"{where} is not a dphybrid result row: {problem}")
    return row


def _unfinished_row(tail: bytes) -> bool:
    """Whether ``tail`` can be the start of a row we were writing when the run was killed.

    Our rows are compact JSON objects starting ``{"id":``; a cut one is valid UTF-8 up to
    a possibly split last character, has no raw control characters or spaces outside
    strings, and never closes its outer object.
    """
    if not (tail.startswith(_ROW_START) or _ROW_START.startswith(tail)):
        return False
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(tail, final=False)
    except UnicodeDecodeError:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            elif ch < " ":
                return False
        elif ch == '"':
            in_string = True
        elif ch not in _BARE:
            return False
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return False  # the object closed: this is a whole document, not a cut row
    return True


def parse_results(data: bytes, name: str) -> tuple[list[dict[str, Any]], int]:
    """The rows of a results file's content and the byte length to keep.

    The length is shorter than the content only when the content ends with an unfinished
    row of ours (which is dropped); a whole row without its newline is a row.  Anything
    else that is not a row raises.
    """
    rows: list[dict[str, Any]] = []
    start = 0
    number = 0
    while start < len(data):
        number += 1
        end = data.find(b"\n", start)
        if end < 0:
            tail = data[start:]
            if _unfinished_row(tail):
                return rows, start
            rows.append(_parse_line(tail, f"{name}: line {number}"))  # a whole row, cut before its newline
            break
        rows.append(_parse_line(data[start:end], f"{name}: line {number}"))
        start = end + 1
    return rows, len(data)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """The complete rows of a results file, in file order (a trailing unfinished row is skipped)."""
    p = Path(path)
    if not p.is_file():
        raise ResultsFileError(f"no results file {p}" if not p.exists() else _not_a_file(p))
    try:
        if p.stat().st_size > MAX_RESULTS_BYTES:
            raise ResultsFileError(f"{p} is {p.stat().st_size:,} bytes, more than the {MAX_RESULTS_BYTES // 2**20} MiB "
                                   "a results file we read may have")
        data = p.read_bytes()
    except OSError as e:
        raise ResultsFileError(f"cannot read {p}: {e.strerror or e}") from None
    return parse_results(data, str(p))[0]


def current_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per id (the last one written: a retry replaces a failure), in suite order.

    Rows carry their entry's position in the suite (``index``); rows of older files
    without it keep their file order, after the others.
    """
    latest: dict[str, tuple[int, dict[str, Any]]] = {}
    for position, row in enumerate(rows):
        first = latest[row["id"]][0] if row["id"] in latest else position
        latest[row["id"]] = (first, row)
    ordered = sorted(latest.values(), key=lambda pr: (pr[1].get("index") is None, pr[1].get("index") or 0, pr[0]))
    return [row for _, row in ordered]


class ResultsLog:
    """A results file open for appending rows: exclusively locked, checked, its cut last row dropped.

    Without ``resume`` the file must be new or empty; with it, the rows already there
    are in :attr:`rows`.  A file this log created and never wrote to is removed on close.
    """

    def __init__(self, path: str | Path, *, resume: bool) -> None:
        self.path = Path(path)
        self._fd, self._created = _open(self.path)
        self._locked = False
        try:
            _lock(self._fd, self.path)
            self._locked = True
            data = _read_all(self._fd)
            if data and not resume:
                raise ResultsFileError(f"{self.path} already exists: pass --resume to continue it, "
                                       "or choose another file")
            self.rows, keep = parse_results(data, str(self.path))
            if keep < len(data):
                os.ftruncate(self._fd, keep)  # only ever our own unfinished last row
            os.lseek(self._fd, 0, os.SEEK_END)
            if keep and not data[:keep].endswith(b"\n"):
                os.write(self._fd, b"\n")  # our last row lost only its newline
        except BaseException:
            self.close()
            raise

    def append(self, row: dict[str, Any]) -> None:
        """Write one row durably: a single write, then fsync."""
        line = row_line(row)
        written = os.write(self._fd, line)
        if written != len(line):
            raise ResultsFileError(f"{self.path}: short write ({written} of {len(line)} bytes)")
        os.fsync(self._fd)

    def close(self) -> None:
        """Release the lock (removing the file if this log created it and wrote nothing)."""
        if self._fd < 0:
            return
        if self._created and self._locked and os.fstat(self._fd).st_size == 0:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = -1

    def __enter__(self) -> "ResultsLog":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _open(path: Path) -> tuple[int, bool]:
    """A read-write descriptor on a regular file (created if missing) and whether it was created."""
    try:
        if path.exists() and not path.is_file():
            raise ResultsFileError(_not_a_file(path))
        if not path.exists() and not path.parent.is_dir():
            raise ResultsFileError(f"cannot create {path}: no directory {path.parent}")
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), True
        except FileExistsError:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        raise ResultsFileError(f"cannot open {path} for writing: {e.strerror or e}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ResultsFileError(_not_a_file(path))
    return fd, False


def _not_a_file(path: Path) -> str:
    return f"{path} is a directory, not a results file" if path.is_dir() else f"{path} is not a regular file"


def _lock(fd: int, path: Path) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ResultsFileError(f"{path} is being written by another dphybrid run (it holds the file's lock); "
                               "wait for it to finish or choose another file") from None
    except OSError as e:
        raise ResultsFileError(f"cannot lock {path}: {e.strerror or e}") from None


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
