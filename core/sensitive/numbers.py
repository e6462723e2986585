"""Digits as callers say and write them: a tokenizer that turns "four one one one", "oh", "double five",
"forty-one eleven" and "4111-1111" alike into digit items that keep their place in the text.

No number-words library fits: the parsers on PyPI (word2number, text2num, numerizer) read quantities ("forty-one
eleven" is not a number to them, "oh" is not zero) and rewrite the text instead of saying where each digit came
from, and the redactor needs the characters to replace. Phone-speak is a small closed grammar; it is written here.
"""

import re
from dataclasses import dataclass

UNITS = {"zero": 0, "oh": 0, "o": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
         "seven": 7, "eight": 8, "nine": 9}
TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
         "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 2, "thirty": 3, "forty": 4, "fourty": 4, "fifty": 5, "sixty": 6, "seventy": 7, "eighty": 8,
        "ninety": 9}
REPEATS = {"double": 2, "triple": 3}
# Said between the digits of one number without breaking it.
FILLERS = frozenset({"uh", "um", "umm", "er", "erm", "ah", "hmm"})
# Written between the groups of one number: "4111 1111", "4111-1111", "4111.1111", "(415) 555-0100", "12/27".
SEPARATORS = frozenset("-.,/()+")
MAX_SEPARATORS = 3

TOKEN = re.compile(r"(?P<word>[A-Za-z]+)|(?P<digits>\d+)|(?P<mark>\S)")


class Token:
    """A word (lowercased), a group of digits or a mark of the text, at [start, end)."""

    __slots__ = ("end", "kind", "start", "text")

    def __init__(self, text: str, start: int, end: int, kind: str):
        self.text, self.start, self.end, self.kind = text, start, end, kind


@dataclass(frozen=True, slots=True)
class Item:
    """Digits said or written as one unit (a group of written digits, "four", "forty-one", "double five"), at
    [start, end) of its text; `token` and `next_token` index the text's tokens it covers."""

    digits: str
    start: int
    end: int
    token: int
    next_token: int
    spoken: bool


def tokenize(text: str) -> list[Token]:
    return [Token(m.group().lower() if m.lastgroup == "word" else m.group(), m.start(), m.end(), m.lastgroup)
            for m in TOKEN.finditer(text)]


# Whether a text may hold a number at all: most turns hold none, and skip the tokenizer.
_NUMBER_WORDS = frozenset({*UNITS, *TEENS, *TENS, *REPEATS})  # "o" among them: a letter unless digits are near
_DIGIT = re.compile(r"\d")
_WORDS = re.compile(r"[a-z]+")


def may_hold_number(text: str) -> bool:
    return _DIGIT.search(text) is not None or not _NUMBER_WORDS.isdisjoint(_WORDS.findall(text.lower()))


def _word(tokens: list[Token], index: int) -> str | None:
    return tokens[index].text if index < len(tokens) and tokens[index].kind == "word" else None


def _skip_hyphen(tokens: list[Token], index: int) -> int:
    """The index after a hyphen that joins two words ("forty-one"), else `index`."""
    if (index + 1 < len(tokens) and tokens[index].text == "-" and tokens[index].start == tokens[index - 1].end
            and tokens[index + 1].start == tokens[index].end and tokens[index + 1].kind == "word"):
        return index + 1
    return index


def _tens_unit(tokens: list[Token], index: int) -> tuple[str, int] | None:
    """A tens word with its unit ("forty-one", "forty one" -> "41") or alone ("forty" -> "40") at `index`."""
    word = _word(tokens, index)
    if word not in TENS:
        return None
    after = _skip_hyphen(tokens, index + 1)
    unit = _word(tokens, after)
    if unit in UNITS and UNITS[unit] != 0 and unit != "o":
        return f"{TENS[word]}{UNITS[unit]}", after + 1
    return f"{TENS[word]}0", index + 1


def item_at(tokens: list[Token], index: int) -> Item | None:
    """The digit item starting at token `index`, or None."""
    token = tokens[index]
    if token.kind == "digits":
        if _glued(tokens, index):
            return None  # part of a code ("J6722063", an IBAN's "GB62HRLZ2520..."), not a number said alone
        return Item(token.text, token.start, token.end, index, index + 1, False)
    word = token.text
    if word not in _NUMBER_WORDS:  # the common case (a mark, any other word): one set lookup
        return None
    digits, after = None, index + 1
    if word in REPEATS:
        unit = _word(tokens, index + 1)
        if unit in UNITS:
            digits, after = str(UNITS[unit]) * REPEATS[word], index + 2
    elif word in UNITS:
        digits = str(UNITS[word])
        if _word(tokens, index + 1) == "hundred":
            after = index + 2
            rest = _tens_unit(tokens, after)
            if rest is not None:
                digits, after = digits + rest[0], rest[1]
            elif _word(tokens, after) in TEENS:
                digits, after = digits + str(TEENS[_word(tokens, after)]), after + 1
            elif _word(tokens, after) in UNITS and _word(tokens, after) not in ("o", "oh"):
                digits, after = digits + "0" + str(UNITS[_word(tokens, after)]), after + 1
            else:
                digits += "00"
        elif word == "o" and not _near_digits(tokens, index):
            return None  # a lone "o" is a letter unless digits are said around it
    elif word in TEENS:
        digits = str(TEENS[word])
    elif word in TENS:
        digits, after = _tens_unit(tokens, index)
    if digits is None:
        return None
    return Item(digits, token.start, tokens[after - 1].end, index, after, True)


def _glued(tokens: list[Token], index: int) -> bool:
    token = tokens[index]
    before = tokens[index - 1] if index else None
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    return ((before is not None and before.kind == "word" and before.end == token.start)
            or (after is not None and after.kind == "word" and after.start == token.end
                and after.text not in ("st", "nd", "rd", "th", "s", "am", "pm")))


def _near_digits(tokens: list[Token], index: int) -> bool:
    for other in (index - 1, index + 1):
        if 0 <= other < len(tokens):
            word = tokens[other]
            if word.kind == "digits" or (word.kind == "word" and word.text in UNITS and word.text != "o"):
                return True
    return False


def items(tokens: list[Token]) -> list[Item]:
    """Every digit item of the text, in order."""
    found, index = [], 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind != "digits" and token.text not in _NUMBER_WORDS:
            index += 1
            continue
        item = item_at(tokens, index)
        if item is None:
            index += 1
            continue
        found.append(item)
        index = item.next_token
    return found


def joined(tokens: list[Token], previous: Item, item: Item) -> bool:
    """Whether `item` continues the number `previous` belongs to: only separators and fillers between them, and a
    written group of digits never glued to a word ("4111" then "th")."""
    between = tokens[previous.next_token:item.token]
    marks = 0
    for token in between:
        if token.kind == "word" and token.text in FILLERS:
            continue
        if token.kind == "mark" and token.text in SEPARATORS:
            marks += 1
            if marks > MAX_SEPARATORS:
                return False
            continue
        return False
    return True


def runs(tokens: list[Token]) -> list[list[Item]]:
    """The text's numbers: maximal runs of digit items joined by separators and fillers only."""
    result: list[list[Item]] = []
    for item in items(tokens):
        if result and joined(tokens, result[-1][-1], item):
            result[-1].append(item)
        else:
            result.append([item])
    return result


def digits_of(run: list[Item]) -> str:
    return "".join(item.digits for item in run)
