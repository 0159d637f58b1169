"""The ``dphybrid`` command line.

Each command lives in its own module exposing ``register(subparsers)`` and
``run(args) -> int``; :data:`COMMANDS` maps each command to its module, and a command
run imports its own module only.  Errors that are the user's input
(every :class:`DPHybridError`, and argparse's) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import re
import sys
from typing import Any, Callable, Sequence

from hybrid.cli import isolation
from samplers.deadline import process_elapsed
from samplers.errors import DPHybridError

INLINE = "DPHYBRID_INLINE"  # "1": run the user's code in this process, not in a child (hybrid.cli.isolation)

# each command and the module that registers and runs it
COMMANDS = {"list": "listing", "sample": "sample", "dist": "dist", "test": "testing", "estimate": "estimate",
            "verify": "verify", "accuracy": "accuracy", "search": "search", "prove": "prove", "certify": "certify",
            "pufferfish": "pufferfish", "suite": "suite", "report": "report"}


# A word starting with '-' and a digit is a value, not an option: negative inputs and numbers
# as written (--input -1,0,2 or --eps -1/2, which the option's type then refuses)
NEGATIVE_VALUE = re.compile(r"^-\.?[0-9][0-9.,/eE+-]*$")


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_VALUE  # argparse's own test for "a negative number"

    def error(self, message: str) -> None:  # one line, status 2 (argparse prints usage too)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone: the command being run imports its own
    module only, not the twelve others."""
    parser = _Parser(prog="dphybrid", description=(
        "Hybrid testing plus exact verification for differential privacy."))
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subs.required = True
    for name, module in COMMANDS.items():
        if command in (None, name):
            importlib.import_module(f"hybrid.cli.{module}").register(subs)
            if name not in ("list", "report", "suite"):  # the commands that may run the user's code
                isolation.add_memory_option(subs.choices[name])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dphybrid`` console script."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: a bad option (one line already written, status 2) or --help
        return e.code if isinstance(e.code, int) else 2
    args.startup = process_elapsed() if argv is None else 0.0  # a command's time budget counts its start-up
    try:
        if os.environ.get(INLINE) != "1" and isolation.names_user_code(args.command, words[1:]):
            budget, memory = getattr(args, "time_budget", None), getattr(args, "memory", None)
            return _guarded(lambda: isolation.run_isolated(lambda: _guarded(lambda: args.run(args)), budget, memory))
        return _guarded(lambda: args.run(args))
    finally:
        if argv is None:  # the process ends now: its objects (numba's are many) need no collection at exit
            gc.freeze()  # the shutdown's full collections took 0.2-0.3 s after a sampler ran


def _guarded(run: Callable[[], int | None]) -> int:
    """``run()``'s exit status, or one line on stderr for what stopped it (bad input: 2)."""
    try:
        return int(run() or 0)
    except DPHybridError as e:
        sys.stderr.write(f"dphybrid: error: {e}\n")
        return 2
    except BrokenPipeError:  # output piped into e.g. head: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        if isolation.in_child():  # Ctrl-C is the parent's: this one the mechanism's code raised
            sys.stderr.write("dphybrid: error: the mechanism's code raised KeyboardInterrupt\n")
            return 2
        sys.stderr.write("dphybrid: interrupted\n")
        return 130

if __name__ == "__main__":
    sys.exit(main())
