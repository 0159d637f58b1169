"""Exceptions shared by every part of dphybrid.

All of them derive from :class:`DPHybridError`, which the CLI turns into a one-line
message and exit status 2.  Each names one kind of bad input, so API users can catch
precisely what they expect.
"""


class DPHybridError(Exception):
    """Base of every error that is the caller's input, not a bug in dphybrid."""


class LanguageError(DPHybridError):
    """A mechanism program is malformed (raised at definition or trace time)."""


class ParameterError(DPHybridError):
    """A mechanism parameter is unknown, of the wrong type or out of range."""


class DomainError(DPHybridError):
    """An input lies outside the mechanism's declared domain (or a pair is not neighbours)."""


class UnknownMechanism(DPHybridError):
    """No catalogue mechanism has that name."""


class UnsupportedByBackend(DPHybridError):
    """The chosen backend cannot handle this program (e.g. continuous noise in an exact backend)."""


class LimitExceeded(DPHybridError):
    """An explicit limit (a node or state budget, a solver timeout) stopped a computation unfinished."""

    def __init__(self, message: str, *, limit: str = "", value: int = 0) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value


class BudgetExceeded(LimitExceeded):
    """A resource budget (BDD nodes, table entries, ...) was exceeded before the answer."""


class SolverUnknown(LimitExceeded):
    """An exact solver stopped at an explicit limit (e.g. a timeout) without deciding."""


class UntraceableError(LanguageError):
    """Plain Python code did something the path-forking tracer cannot follow (samplers.plain).

    ``site`` is ``"file:line"`` of the user's code and ``operation`` what it did there.
    """

    def __init__(self, message: str, *, site: str = "", operation: str = "") -> None:
        super().__init__(f"{site}: {message}" if site else message)
        self.site = site
        self.operation = operation


class TooManyPaths(UntraceableError):
    """Path-forking exploration of a plain Python mechanism passed its explicit path limit."""


def install_hint(extra: str) -> str:
    """How to install an optional extra, from PyPI and from a clone of the repository."""
    return f"pip install 'dphybrid[{extra}]' (from a clone: pip install '.[{extra}]')"
