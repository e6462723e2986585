"""Numbers read from text (query strings, form fields, request headers, JSON bodies), bounded before any conversion.

Converting text to a number is not constant time: `int(decimal.Decimal("1e1000000"))` builds a million-digit
integer (about 40 s of CPU under the GIL), and an integer of a few thousand digits costs time quadratic in its
length. Every number a client sends is therefore checked against a small grammar first: at most `MAX_CHARS`
characters, an exponent of at most four digits, and a magnitude within a float's range (what a JSON number we
store can hold). Only then is it converted, so the worst case costs microseconds.
"""

import decimal
import re

MAX_CHARS = 64
# The magnitudes a float can hold (JSON numbers are stored as floats or as integers of at most MAX_CHARS digits).
MAX_ADJUSTED_EXPONENT = 308

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,4})?")
_INTEGER = re.compile(r"[+-]?\d+")

TOO_LONG = f"must be at most {MAX_CHARS} characters"
NOT_A_NUMBER = "must be a number"
OUT_OF_RANGE = f"must be a number between -1e{MAX_ADJUSTED_EXPONENT} and 1e{MAX_ADJUSTED_EXPONENT}"


def parse_number(text: str) -> int | float:
    """`text` as the JSON number it spells: an int when it is a whole number (exactly, where a float would round
    10**20 + 1), else a float. Raises ValueError with the problem (too long, not a number, out of range)."""
    text = text.strip()
    if len(text) > MAX_CHARS:
        raise ValueError(TOO_LONG)
    if not _NUMBER.fullmatch(text):
        raise ValueError(NOT_A_NUMBER)
    number = decimal.Decimal(text)  # exact and cheap once the exponent has at most four digits
    if number and not -MAX_ADJUSTED_EXPONENT <= number.adjusted() <= MAX_ADJUSTED_EXPONENT:
        raise ValueError(OUT_OF_RANGE)
    # A whole number of at most 309 digits converts in microseconds.
    return int(number) if number == number.to_integral_value() else float(number)


def parse_integer(text: str) -> int:
    """`text` as a whole number of at most MAX_CHARS characters (digits, an optional sign), or ValueError."""
    text = text.strip()
    if len(text) > MAX_CHARS:
        raise ValueError(TOO_LONG)
    if not _INTEGER.fullmatch(text):
        raise ValueError("must be a whole number")
    return int(text)


def json_int(text: str) -> int:
    """`json.loads(parse_int=...)`: an integer literal of at most MAX_CHARS characters."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"Numbers may have at most {MAX_CHARS} characters.")
    return int(text)


def json_float(text: str) -> float:
    """`json.loads(parse_float=...)`: a number literal of at most MAX_CHARS characters (a float's own parse is
    linear; the bound keeps bodies and what is stored from them plain)."""
    if len(text) > MAX_CHARS:
        raise ValueError(f"Numbers may have at most {MAX_CHARS} characters.")
    return float(text)
