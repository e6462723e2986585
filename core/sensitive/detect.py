"""What counts as sensitive in a call's words, kind by kind (docs/privacy.md#redaction says why each rule is as it
is). Works on the digit items of core.sensitive.numbers, so written and spoken numbers are one case."""

import re

import phonenumbers
from stdnum import iban as std_iban
from stdnum import luhn
from stdnum.us import rtn as us_rtn
from stdnum.us import ssn as us_ssn

from .countries import national_id_modules

# Card brands by prefix and length: a Luhn pass alone is one 16-digit string in ten, so a window of a longer run
# must also look like a card some network issues.
_BRANDS = (
    (re.compile(r"4"), (13, 16, 19)),  # Visa
    (re.compile(r"5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)"), (16,)),  # Mastercard
    (re.compile(r"3[47]"), (15,)),  # American Express
    (re.compile(r"6(?:011|5|4[4-9]|22)"), (16, 17, 18, 19)),  # Discover
    (re.compile(r"35(?:2[89]|[3-8]\d)"), (16, 17, 18, 19)),  # JCB
    (re.compile(r"2131|1800"), (15,)),  # JCB's older 15-digit numbers
    (re.compile(r"3(?:0[0-5]|[689])"), (14, 15, 16, 17, 18, 19)),  # Diners Club
    (re.compile(r"62"), (16, 17, 18, 19)),  # UnionPay
    (re.compile(r"5[06-9]|6\d"), (13, 14, 15, 16, 17, 18, 19)),  # Maestro
)


def is_card(digits: str, *, branded: bool = True) -> bool:
    """13 to 19 digits that pass the Luhn check; `branded`: and that start and are as long as some network's cards
    (asked of a part of a longer number, where the Luhn check alone would pass one window in ten)."""
    if not 13 <= len(digits) <= 19:
        return False
    if branded and not any(prefix.match(digits) and len(digits) in lengths for prefix, lengths in _BRANDS):
        return False
    return luhn.is_valid(digits)


def is_ssn(digits: str) -> bool:
    return len(digits) == 9 and us_ssn.is_valid(digits)


def is_routing(digits: str) -> bool:
    return len(digits) == 9 and us_rtn.is_valid(digits)


IBAN = re.compile(r"\b[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,30}\b")


def ibans(text: str) -> list[tuple[int, int]]:
    found = []
    for match in IBAN.finditer(text):
        candidate = match.group()
        # The regex may take a word after the number ("... 32 thanks"): shorten it word by word.
        while candidate:
            if std_iban.is_valid(candidate):
                found.append((match.start(), match.start() + len(candidate)))
                break
            cut = max(candidate.rfind(" "), candidate.rfind("-"))
            if cut <= 4:
                break
            candidate = candidate[:cut]
    return found


EMAIL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_TLD = r"(?:com|net|org|edu|gov|io|co|us|uk|ca|de|fr|info|biz|me|mail)"
_PART = r"[a-z0-9]+(?:\s+(?:dot|underscore|dash|hyphen|period)\s+[a-z0-9]+)*"
SPOKEN_EMAIL = re.compile(
    rf"\b{_PART}\s+at\s+[a-z0-9]+(?:\s+dot\s+[a-z0-9]+)*\s+dot\s+{_TLD}\b", re.IGNORECASE
)


def emails(text: str) -> list[tuple[int, int]]:
    spans = [match.span() for match in EMAIL.finditer(text)]
    spans += [match.span() for match in SPOKEN_EMAIL.finditer(text)]
    return spans


def phone(digits: str, region: str, plus: bool) -> str | None:
    """The number in E.164 when `digits` is a valid phone number of the region (or international with a +)."""
    if not 7 <= len(digits) <= 15:
        return None
    candidates = ["+" + digits] if plus else [digits]
    if not plus and len(digits) >= 11:
        candidates.append("+" + digits)
    for candidate in candidates:
        try:
            number = phonenumbers.parse(candidate, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return None


def national_ids(text: str, region: str) -> list[tuple[int, int]]:
    """Identity numbers written with their letters (a DNI's control letter, a codice fiscale) that the region's
    python-stdnum modules validate. Digit-only ones go through the digit runs (they need context)."""
    modules = national_id_modules(region)
    if not modules:
        return []
    found = []
    for match in re.finditer(r"\b[A-Za-z0-9][A-Za-z0-9 .-]{6,22}[A-Za-z0-9]\b", text):
        value = match.group()
        if not (any(c.isalpha() for c in value) and any(c.isdigit() for c in value)):
            continue
        for words in _trimmed(value):
            if any(module.is_valid(words) for module in modules):
                found.append((match.start(), match.start() + len(words)))
                break
    return found


def _trimmed(value: str):
    parts = value.split(" ")
    for end in range(len(parts), 0, -1):
        yield " ".join(parts[:end])


def national_id_digits(digits: str, region: str) -> bool:
    return any(module.is_valid(digits) for module in national_id_modules(region))
