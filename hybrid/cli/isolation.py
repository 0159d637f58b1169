"""User code runs in a child process: whatever it does, the command answers.

A command whose arguments name the user's code (``file.py:alg``, ``module:alg``, or a witness
or proof file that ``certify`` reads) runs in a forked child.  The child has no standard input,
an address-space limit (``--memory``, else ``DPHYBRID_MEMORY``, else :data:`MEMORY_SHARE` of the
machine), its
output relayed through pipes (at most :data:`MAX_OUTPUT` bytes), Ctrl-C left to the parent,
and it sends its exit status on a pipe of its own before it ends.  The parent waits for that
status, for at most the command's time budget + 20 % (at least :data:`GRACE` more): an
``os._exit`` or a crash in the user's code, a thread it leaves running, a closed ``sys.stdout``,
an endless loop, an exception that is not an ``Exception`` all end in one line on stderr and
exit status 2 (3 for the time budget), never in silence, a traceback or a hang.
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import resource
import selectors
import signal
import sys
import time
from typing import Callable

from hybrid.child_process import die_with_parent
from samplers.errors import ParameterError

MAX_OUTPUT = 64 * 2**20  # bytes of the child's stdout and stderr relayed; the rest is cut, and that said
MEMORY_SHARE = 0.75  # of the machine's memory, the child's default address-space limit
MAX_LIMIT = 2**62  # bytes: a larger --memory is no limit at all
GRACE = 1.0  # seconds past the budget, at least, before the parent stops a child (its own stop, teardown)
SLACK = 1.2
DRAIN = 2.0  # seconds the output may still flow after the child answered
CHUNK = 65536
_in_child = False


def in_child() -> bool:
    """Whether this process is a command's child (where Ctrl-C never arrives: the parent ignores it for us)."""
    return _in_child


def names_user_code(command: str, words: list[str]) -> bool:
    """Whether the command runs the user's code: a ``file.py:alg`` / ``module:alg`` word, or ``certify``."""
    from samplers.plain.load import is_function_spec

    return command == "certify" or any(is_function_spec(w) for w in words if not w.startswith("-"))


def add_memory_option(parser: argparse.ArgumentParser) -> None:
    """``--memory GIB`` on a command that may run the user's code."""
    from hybrid.cli.argtypes import positive

    parser.add_argument("--memory", type=positive, metavar="GIB", default=None,
                        help="address-space limit of the process that runs your code, in GiB (default "
                             "$DPHYBRID_MEMORY, else 3/4 of the machine's memory)")


def memory_limit(gib: float | None = None) -> int | None:
    """The child's address-space limit in bytes: ``gib``, else ``$DPHYBRID_MEMORY`` (GiB), else a share of the machine."""
    text = os.environ.get("DPHYBRID_MEMORY", "").strip()
    if gib is None and text:
        try:
            gib = float(text)
        except ValueError:
            raise ParameterError(f"DPHYBRID_MEMORY={text!r} is not a number of GiB") from None
        if not gib > 0 or gib != gib or gib == float("inf"):
            raise ParameterError(f"DPHYBRID_MEMORY={text!r} must be a positive number of GiB")
    if gib is not None:
        return None if gib * 2**30 >= MAX_LIMIT else int(gib * 2**30)
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * MEMORY_SHARE)
    except (ValueError, OSError):
        return None


class _Stream(io.TextIOWrapper):
    """The child's stdout or stderr: a pipe to the parent that answers ``isatty()`` as the parent's stream."""

    def __init__(self, fd: int, tty: bool) -> None:
        super().__init__(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                         line_buffering=True)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _child(command: Callable[[], int], status_w: int, out_w: int, err_w: int, ttys: tuple[bool, bool],
           memory: int | None) -> None:
    """Run ``command`` in the forked child and end it; never returns."""
    global _in_child
    _in_child = True
    code = 2
    try:
        die_with_parent()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a real Ctrl-C is the parent's to handle
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        sys.stdin = open(os.devnull)  # noqa: SIM115 (the child's whole life)
        sys.stdout, sys.stderr = _Stream(1, ttys[0]), _Stream(2, ttys[1])
        if memory is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            limit = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        code = command()
    except BaseException as e:  # noqa: BLE001 (the user's code may raise anything: say it, in one line)
        reason = "out of memory (raise --memory)" if isinstance(e, MemoryError) else f"{type(e).__name__}: {e}"
        os.write(2, f"dphybrid: error: the command stopped: {reason}\n".encode(errors="backslashreplace"))
        code = 2
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException:  # noqa: BLE001 (a stream the user's code closed or replaced)
        pass
    os.write(status_w, str(code).encode())
    os._exit(0)


class _Relay:
    """Copies the child's bytes to one of our text streams, decoded, up to the shared :data:`MAX_OUTPUT`."""

    budget = MAX_OUTPUT

    def __init__(self, target: Callable[[], io.TextIOBase]) -> None:
        self.target = target
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.cut = False

    def feed(self, data: bytes, final: bool = False) -> None:
        if _Relay.budget <= 0:
            self.cut = self.cut or bool(data)
            return
        data, _Relay.budget = data[:_Relay.budget], _Relay.budget - len(data)
        text = self.decoder.decode(data, final)
        if text:
            out = self.target()
            out.write(text)
            out.flush()


def run_isolated(command: Callable[[], int], time_budget: float | None, memory_gib: float | None = None) -> int:
    """``command()``'s exit status, run in a child process (see the module docstring)."""
    memory = memory_limit(memory_gib)
    ttys = tuple(_isatty(s) for s in (sys.stdout, sys.stderr))
    for s in (sys.stdout, sys.stderr):
        s.flush()
    status_r, status_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child ends in os._exit; its behaviour is tested through the parent)
        for fd in (status_r, out_r, err_r):
            os.close(fd)
        _child(command, status_w, out_w, err_w, ttys, memory)
    for fd in (status_w, out_w, err_w):
        os.close(fd)
    _Relay.budget = MAX_OUTPUT
    relays = {out_r: _Relay(lambda: sys.stdout), err_r: _Relay(lambda: sys.stderr)}
    deadline = None if time_budget is None else time.monotonic() + max(time_budget * SLACK, time_budget + GRACE)
    status = b""
    sel = selectors.DefaultSelector()
    for fd in (status_r, out_r, err_r):
        sel.register(fd, selectors.EVENT_READ)
    try:
        while sel.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                if status:  # answered: only a process it started still holds the output open
                    break
                return _stopped(pid, time_budget)
            for key, _ in sel.select(timeout=left):
                data = os.read(key.fd, CHUNK)
                if not data:
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    if key.fd in relays:
                        relays[key.fd].feed(b"", final=True)
                    elif status:
                        deadline = time.monotonic() + DRAIN
                elif key.fd == status_r:
                    status += data
                else:
                    relays[key.fd].feed(data)
    except KeyboardInterrupt:
        _kill(pid)
        sys.stderr.write("dphybrid: interrupted\n")
        return 130
    except BaseException:  # our own output failing (a closed pipe): the child goes with us
        _kill(pid)
        raise
    finally:
        for fd in list(sel.get_map()):
            os.close(fd)
        sel.close()
    _, wait = _kill(pid)
    if any(r.cut for r in relays.values()):
        sys.stderr.write(f"dphybrid: the command's output was cut at {MAX_OUTPUT // 2**20} MiB\n")
    if status:
        return int(status)
    sys.stderr.write(f"dphybrid: error: the mechanism's code ended the process ({_how(wait)}) before the command "
                     "answered\n")
    return 2


def _isatty(stream: io.TextIOBase) -> bool:
    try:
        return stream.isatty()
    except (ValueError, OSError):
        return False


def _kill(pid: int) -> tuple[int, int]:
    """Stop the child (its lingering threads with it) and reap it."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return done, status
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return os.waitpid(pid, 0)


def _how(wait: int) -> str:
    if os.WIFSIGNALED(wait):
        sig = os.WTERMSIG(wait)
        return f"killed by {signal.Signals(sig).name}" + (" (out of memory?)" if sig == signal.SIGKILL else "")
    return f"exit status {os.waitstatus_to_exitcode(wait)}: os._exit or sys.exit"


def _stopped(pid: int, time_budget: float | None) -> int:
    _kill(pid)
    sys.stderr.write(f"dphybrid: the mechanism's code kept running past the time budget of {time_budget:g} s "
                     "(+20 %); no result (raise --time-budget, or check the code for an endless loop)\n")
    return 3
