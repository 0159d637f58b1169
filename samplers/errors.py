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


class BudgetExceeded(DPHybridError):
    """An explicit resource limit (a BDD node budget, ...) was hit before the answer."""

    def __init__(self, message: str, *, limit: str = "", value: int = 0) -> None:
        super().__init__(message)
        self.limit = limit
        self.value = value
