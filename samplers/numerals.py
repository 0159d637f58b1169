"""The one grammar of numbers a user writes: options, ``-p`` parameters, inputs and files.

Integers are ASCII digits with an optional sign; decimals are ASCII digits with an
optional point and exponent.  Python's ``int()`` and ``float()`` accept more (``1_0`` is
10, the Arabic-Indic ``٣`` is 3), so text is matched here first and one rule holds
everywhere.  Integers of more than :data:`MAX_DIGITS` digits are refused before
``int()`` would raise (Python's own limit is 4300 digits), and error messages cut long
text (:func:`short_text`) rather than echo thousands of digits.  A decimal whose double
is 0 or infinite although the text is not (``1e-400``, ``1e400``) is refused: the
rational form ``p/q`` keeps such a value exact.
"""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal

from samplers.errors import DPHybridError, ParameterError

INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
MAX_DIGITS = 4000  # below Python's int-string limit (4300), far above any count we can use


def short_text(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (with its length), for error messages."""
    return text if len(text) <= limit else f"{text[:limit - 3]}... ({len(text)} characters)"


def is_integer(text: str) -> bool:
    """Whether ``text`` (stripped) is an integer of the grammar, digit limit included."""
    t = text.strip()
    return bool(INTEGER.fullmatch(t)) and len(t.lstrip("+-")) <= MAX_DIGITS


def parse_integer(text: str, what: str, *, error: type[DPHybridError] = ParameterError) -> int:
    """The integer ``text`` denotes, or ``error`` with a one-line message naming ``what``."""
    t = text.strip()
    if not INTEGER.fullmatch(t):
        raise error(f"{what}: {short_text(repr(text))} is not an integer (ASCII digits, optional sign)")
    if len(t.lstrip("+-")) > MAX_DIGITS:
        raise error(f"{what}: an integer of {len(t.lstrip('+-'))} digits is beyond the {MAX_DIGITS} we read")
    return int(t)


def parse_decimal(text: str, what: str, *, error: type[DPHybridError] = ParameterError) -> float:
    """The finite double of a decimal ``text``; one that rounds to 0 or infinity is refused."""
    t = text.strip()
    if not DECIMAL.fullmatch(t) or len(t) > MAX_DIGITS:
        raise error(f"{what}: {short_text(repr(text))} is not a number (a finite decimal or a rational like 1/2)")
    f = float(t)
    if math.isinf(f):
        raise error(f"{what}: {short_text(text)} is not a finite number (it rounds to infinity as a double)")
    if f == 0 and Decimal(t) != 0:
        raise error(f"{what}: {short_text(text)} rounds to 0 as a double; write it as a rational p/q to keep it exact")
    return f


def count_text(n: int) -> str:
    """A count for people: ``12,345``, or ``about 10^30103`` when it is too long to print whole."""
    if n < 10**15:
        return f"{n:,}"
    return f"about 10^{int((n.bit_length() - 1) * math.log10(2))}"


def read_error_text(e: ValueError) -> str:
    """A parser's ValueError for people: Python's int-string limit said without its advice to raise it."""
    text = str(e)
    if "integer string conversion" in text:
        return f"an integer has more than the {sys.get_int_max_str_digits()} digits a value may have"
    return text
