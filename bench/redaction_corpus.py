"""Synthetic phone-call transcripts for the redaction detector (core.sensitive): every kind in every written and
spoken form, split over the caller's turns, beside distractors (order and confirmation numbers, prices, times,
quantities, booking dates, the organization's own number). Seeded and offline: the same seed gives the same corpus.

Used by `bench.redaction` (at least 2,000 transcripts: recall per kind, the share of distractors touched) and, a small
slice of it, by the tests (tests/calls/test_redaction.py: each kind in each form in every place). No Django here.
"""

import random
from dataclasses import dataclass, field

import phonenumbers
from faker import Faker

ORG_NUMBER = "+14155550100"  # the organization's published number: read back by callers, never redacted
ORG_NUMBER_SAID = "(415) 555-0100"

_DIGIT_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
          "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
             "nineteenth", "twentieth", "twenty-first", "twenty-second", "twenty-third", "twenty-fourth",
             "twenty-fifth", "twenty-sixth", "twenty-seventh", "twenty-eighth"]
_CARD_TYPES = ["visa16", "visa16", "visa16", "mastercard", "mastercard", "amex", "discover", "jcb16", "diners",
               "visa13", "visa19"]

KIND_FORMS = {
    "card_number": ["plain", "spaces", "dashes", "dots", "spoken", "spoken_oh_double", "spoken_pairs",
                    "split_turns", "split_turns_spoken", "with_expiry_and_code"],
    "government_id": ["dashes", "spaces", "plain_with_context", "spoken", "split_turns"],
    "bank_account": ["iban", "iban_compact", "routing_and_account", "routing_and_account_spoken"],
    "email": ["written", "spoken"],
    "phone_number": ["parentheses", "dashes", "international", "spoken", "split_turns"],
    "date_of_birth": ["month_name", "numeric", "spoken", "dob_abbreviation", "asked_by_agent"],
}
DISTRACTOR_FORMS = ["order_number", "order_number_spoken", "confirmation", "price", "price_spoken", "time",
                    "quantity", "booking_date", "org_number", "zip_code"]

_FILLER_AGENT = [
    "Thanks for calling Luigi's, this is the assistant, how can I help you today?",
    "Sure, I can help with that.",
    "Is there anything else I can do for you?",
    "Let me check that for you.",
    "Great, I have that down.",
    "Could you repeat that please?",
    "Perfect, thank you.",
]
_FILLER_CALLER = [
    "Hi, I'd like to place an order for pickup.",
    "Yeah, that sounds good.",
    "Can I also get a side of garlic knots?",
    "No, that's everything, thanks.",
    "Okay, great.",
    "What time do you close tonight?",
    "Um, let me think for a second.",
]


@dataclass
class Secret:
    """A sensitive value as placed: the turns that say it, the same as one sentence (for a summary, a message), and
    the parts of it (as written or said) that must not survive redaction."""

    kind: str
    form: str
    turns: list[tuple[str, str]]
    sentence: str
    parts: list[str]
    first_turn: int = 0  # where sample() placed its turns


@dataclass
class Distractor:
    form: str
    turns: list[tuple[str, str]]
    keep: list[str]  # must survive redaction untouched
    first_turn: int = 0


@dataclass
class Sample:
    turns: list[tuple[str, str]]
    secrets: list[Secret] = field(default_factory=list)
    distractors: list[Distractor] = field(default_factory=list)


def _said_digits(digits: str, rng: random.Random, *, oh: bool = False, double: bool = False) -> str:
    words, i = [], 0
    while i < len(digits):
        d = int(digits[i])
        if double and i + 1 < len(digits) and digits[i + 1] == digits[i] and rng.random() < 0.7:
            words.append(f"double {'oh' if d == 0 and oh else _DIGIT_WORDS[d]}")
            i += 2
            continue
        words.append("oh" if d == 0 and oh else _DIGIT_WORDS[d])
        i += 1
    return " ".join(words)


def _said_pair(pair: str) -> str:
    tens, unit = int(pair[0]), int(pair[1])
    if tens == 0:
        return f"oh {_DIGIT_WORDS[unit]}"
    if tens == 1:
        return _TEENS[unit]
    return _TENS[tens] if unit == 0 else f"{_TENS[tens]}-{_DIGIT_WORDS[unit]}"


def _said_pairs(digits: str, rng: random.Random) -> str:
    words = [_said_pair(digits[i:i + 2]) if i + 1 < len(digits) else _DIGIT_WORDS[int(digits[i])]
             for i in range(0, len(digits), 2)]
    return ", ".join(" ".join(words[k:k + 2]) for k in range(0, len(words), 2))


def _groups(digits: str) -> list[str]:
    if len(digits) == 15:  # American Express: 4-6-5
        return [digits[:4], digits[4:10], digits[10:]]
    if len(digits) == 14:  # Diners: 4-6-4
        return [digits[:4], digits[4:10], digits[10:]]
    return [digits[i:i + 4] for i in range(0, len(digits), 4)]


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _phone(rng: random.Random) -> str:
    while True:
        number = f"{rng.choice([212, 310, 312, 415, 503, 512, 617, 646, 702, 718, 773, 206, 404, 305])}" \
                 f"{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
        if number[3:6] == "555":
            continue
        if phonenumbers.is_valid_number(phonenumbers.parse(number, "US")):
            return number


def _ssn(rng: random.Random) -> str:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"


def _routing(rng: random.Random) -> str:
    while True:
        first = f"{rng.choice(['0', '1', '2', '3'])}{rng.randint(0, 9)}{rng.randint(0, 999999):06d}"
        weights = [3, 7, 1, 3, 7, 1, 3, 7]
        partial = sum(int(d) * w for d, w in zip(first, weights, strict=True))
        check = (10 - partial % 10) % 10
        number = first + str(check)
        if number[:2] in ("00",):
            continue
        return number


def secret(kind: str, form: str, rng: random.Random, fake: Faker) -> Secret:
    """One value of `kind` said in `form`."""
    return _MAKERS[kind](form, rng, fake)


def _card(form: str, rng: random.Random, fake: Faker) -> Secret:
    digits = fake.credit_card_number(card_type=rng.choice(_CARD_TYPES))
    groups = _groups(digits)
    lead = rng.choice(["Sure, my card number is", "It's", "Okay, the card is", "Yeah it's", "The number is"])
    if form in ("split_turns", "split_turns_spoken"):
        half = max(1, len(groups) // 2)
        first, second = "".join(groups[:half]), "".join(groups[half:])
        if form == "split_turns":
            said1, said2 = " ".join(groups[:half]), " ".join(groups[half:])
        else:
            said1, said2 = _said_digits(first, rng), _said_digits(second, rng)
        turns = [("caller", f"{lead} {said1}"), ("agent", rng.choice(["Go on.", "Okay, go ahead.", "Mm-hm."])),
                 ("caller", f"{said2}.")]
        return Secret("card_number", form, turns, f"{lead} {said1} {said2}.", [said1, said2])
    said = {
        "plain": digits, "spaces": " ".join(groups), "dashes": "-".join(groups), "dots": ".".join(groups),
        "spoken": _said_digits(digits, rng), "spoken_oh_double": _said_digits(digits, rng, oh=True, double=True),
        "spoken_pairs": _said_pairs(digits, rng), "with_expiry_and_code": " ".join(groups),
    }[form]
    parts = [said]
    sentence = f"{lead} {said}."
    turns = [("caller", sentence)]
    if form == "with_expiry_and_code":
        month, year = rng.randint(1, 12), rng.randint(26, 33)
        code = f"{rng.randint(0, 9999):04d}" if digits.startswith(("34", "37")) else f"{rng.randint(0, 999):03d}"
        expiry = rng.choice([f"{month:02d}/{year}", f"{month:02d} {year}", _said_pairs(f"{month:02d}{year}", rng)])
        said_code = rng.choice([code, _said_digits(code, rng)])
        turns = [("caller", f"{lead} {said}"), ("agent", "And the expiration date?"),
                 ("caller", f"It expires {expiry}."), ("agent", "And the security code on the back?"),
                 ("caller", f"{said_code}.")]
        sentence = f"{lead} {said}, expires {expiry}, security code {said_code}."
        parts = [said, expiry, said_code]
    return Secret("card_number", form, turns, sentence, parts)


def _government_id(form: str, rng: random.Random, fake: Faker) -> Secret:
    digits = _ssn(rng)
    dashed = f"{digits[:3]}-{digits[3:5]}-{digits[5:]}"
    spaced = f"{digits[:3]} {digits[3:5]} {digits[5:]}"
    ask = ("agent", rng.choice(["Can I have your social security number?", "What's your SSN for the file?",
                                "And your social, please?"]))
    if form == "split_turns":
        turns = [ask, ("caller", f"It's {digits[:3]} {digits[3:5]}"), ("agent", "Okay."),
                 ("caller", f"{digits[5:]}.")]
        return Secret("government_id", form, turns, f"My social is {spaced}.", [f"{digits[:3]} {digits[3:5]}",
                                                                                 digits[5:]])
    said = {"dashes": dashed, "spaces": spaced, "plain_with_context": digits,
            "spoken": _said_digits(digits, rng, oh=rng.random() < 0.5)}[form]
    turns = [ask, ("caller", f"Sure, it's {said}.")]
    return Secret("government_id", form, turns, f"The caller's social security number is {said}.", [said])


def _bank(form: str, rng: random.Random, fake: Faker) -> Secret:
    if form in ("iban", "iban_compact"):
        iban = fake.iban()
        said = iban if form == "iban_compact" else " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
        turns = [("agent", "What account should we refund?"), ("caller", f"My IBAN is {said}, thanks.")]
        return Secret("bank_account", form, turns, f"Refund to IBAN {said}.", [said])
    routing, account = _routing(rng), f"{rng.randint(10 ** 7, 10 ** 12 - 1)}"
    if form == "routing_and_account_spoken":
        said_routing, said_account = _said_digits(routing, rng), _said_digits(account, rng)
    else:
        said_routing, said_account = routing, account
    turns = [("agent", "For direct deposit I need your routing number and account number."),
             ("caller", f"The routing number is {said_routing}."), ("agent", "And the account number?"),
             ("caller", f"Account number {said_account}.")]
    return Secret("bank_account", form, turns,
                  f"Routing number {said_routing} and account number {said_account}.", [said_routing, said_account])


def _email(form: str, rng: random.Random, fake: Faker) -> Secret:
    user = f"{fake.first_name().lower()}.{fake.last_name().lower().replace(' ', '')}{rng.randint(1, 99)}"
    domain = rng.choice(["gmail.com", "yahoo.com", "outlook.com", "example.org", "icloud.com"])
    if form == "written":
        said = f"{user}@{domain}"
    else:
        said = f"{user.replace('.', ' dot ')} at {domain.replace('.', ' dot ')}"
    turns = [("agent", "What's the best email for the receipt?"), ("caller", f"You can use {said}.")]
    return Secret("email", form, turns, f"Send the receipt to {said}.", [said])


def _phone_secret(form: str, rng: random.Random, fake: Faker) -> Secret:
    digits = _phone(rng)
    area, exchange, line = digits[:3], digits[3:6], digits[6:]
    if form == "split_turns":
        turns = [("caller", f"Call me back at {area} {exchange}"), ("agent", "Mm-hm."), ("caller", f"{line}.")]
        return Secret("phone_number", form, turns, f"Call back at {area} {exchange} {line}.",
                      [f"{area} {exchange}", line])
    said = {"parentheses": f"({area}) {exchange}-{line}", "dashes": f"{area}-{exchange}-{line}",
            "international": f"+1 {area} {exchange} {line}",
            "spoken": ", ".join(_said_digits(part, rng, oh=True) for part in (area, exchange, line))}[form]
    turns = [("agent", "What's a good number to reach you?"), ("caller", f"It's {said}.")]
    return Secret("phone_number", form, turns, f"Callback number {said}.", [said])


def _date_of_birth(form: str, rng: random.Random, fake: Faker) -> Secret:
    born = fake.date_of_birth(minimum_age=18, maximum_age=90)
    if form == "month_name":
        said, turns_of = f"{_MONTHS[born.month - 1]} {born.day}, {born.year}", "I was born on {}."
    elif form == "numeric":
        said, turns_of = f"{born.month:02d}/{born.day:02d}/{born.year}", "My date of birth is {}."
    elif form == "spoken":
        year = f"{_said_pair(str(born.year)[:2])} {_said_pair(str(born.year)[2:])}"
        said = f"the {_ORDINALS[min(born.day, 28) - 1]} of {_MONTHS[born.month - 1]} {year}"
        turns_of = "My birthday is {}."
    elif form == "dob_abbreviation":
        said, turns_of = f"{born.month}/{born.day}/{str(born.year)[2:]}", "DOB {}."
    else:
        said = f"{_MONTHS[born.month - 1]} {_ORDINALS[min(born.day, 28) - 1]}, {born.year}"
        turns = [("agent", "Can you confirm your date of birth?"), ("caller", f"{said}.")]
        return Secret("date_of_birth", form, turns, f"The caller was born {said}.", [said])
    sentence = turns_of.format(said)
    return Secret("date_of_birth", form, [("caller", sentence)], sentence, [said])


_MAKERS = {"card_number": _card, "government_id": _government_id, "bank_account": _bank, "email": _email,
           "phone_number": _phone_secret, "date_of_birth": _date_of_birth}


def _not_luhn(rng: random.Random, length: int) -> str:
    while True:
        digits = str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(length - 1))
        if not _luhn_ok(digits):
            return digits


def distractor(form: str, rng: random.Random, fake: Faker) -> Distractor:
    """Something a caller or the agent says that looks like a number to redact and is not."""
    if form == "order_number":
        number = _not_luhn(rng, 16)
        said = rng.choice([number, " ".join(_groups(number))])
        return Distractor(form, [("agent", f"Your order number is {said}.")], [said])
    if form == "order_number_spoken":
        number = _not_luhn(rng, 16)
        said = _said_digits(number, rng)
        return Distractor(form, [("caller", f"My order number is {said}.")], [said])
    if form == "confirmation":
        code = f"{rng.choice('ABCDEFGHJKLMNPQRSTUVWXYZ')}{rng.randint(100000, 9999999)}"
        return Distractor(form, [("agent", f"Your confirmation number is {code}.")], [code])
    if form == "price":
        price = f"${rng.randint(5, 120)}.{rng.choice(['00', '50', '99', '25', '75'])}"
        return Distractor(form, [("agent", f"Your total comes to {price} with tax.")], [price])
    if form == "price_spoken":
        said = f"{rng.choice(_TENS[2:])} {rng.choice(_DIGIT_WORDS[1:])} dollars and {rng.choice(_TENS[2:])} cents"
        return Distractor(form, [("agent", f"That's {said}.")], [said])
    if form == "time":
        time = f"{rng.randint(1, 12)}:{rng.choice(['00', '15', '30', '45'])}"
        return Distractor(form, [("caller", f"Can I pick it up at {time} tonight?")], [time])
    if form == "quantity":
        said = f"{rng.randint(2, 40)} {rng.choice(['large pizzas', 'wings', 'sodas', 'people', 'garlic knots'])}"
        return Distractor(form, [("caller", f"We need {said}, please.")], [said])
    if form == "booking_date":
        said = f"{_MONTHS[rng.randint(0, 11)]} {rng.randint(1, 28)} at {rng.randint(1, 9)} pm"
        return Distractor(form, [("caller", f"Can I book a table for {said}?")], [said])
    if form == "org_number":
        return Distractor(form, [("agent", f"You can always reach us at {ORG_NUMBER_SAID}.")], [ORG_NUMBER_SAID])
    zip_code = f"{rng.randint(10000, 99999)}"
    return Distractor("zip_code", [("caller", f"Delivery to zip code {zip_code}.")], [zip_code])


def sample(rng: random.Random, fake: Faker, *, secrets: list[tuple[str, str]] | None = None,
           distractors: list[str] | None = None) -> Sample:
    """One transcript: filler turns with the secrets and distractors placed among them (random ones if not named)."""
    if secrets is None:
        kinds = rng.sample(list(KIND_FORMS), k=rng.choice([1, 1, 2]))
        secrets = [(kind, rng.choice(KIND_FORMS[kind])) for kind in kinds]
    if distractors is None:
        distractors = rng.sample(DISTRACTOR_FORMS, k=rng.randint(1, 3))
    made = Sample(turns=[("agent", _FILLER_AGENT[0]), ("caller", rng.choice(_FILLER_CALLER))])
    blocks = [secret(kind, form, rng, fake) for kind, form in secrets] + [
        distractor(form, rng, fake) for form in distractors]
    rng.shuffle(blocks)
    for block in blocks:
        if rng.random() < 0.5:
            made.turns.append(("agent", rng.choice(_FILLER_AGENT[1:])))
        block.first_turn = len(made.turns)
        made.turns.extend(block.turns)
        if isinstance(block, Secret):
            made.secrets.append(block)
        else:
            made.distractors.append(block)
    made.turns.append(("agent", rng.choice(_FILLER_AGENT[1:])))
    made.turns.append(("caller", rng.choice(_FILLER_CALLER)))
    return made


def corpus(count: int, *, seed: int = 36) -> list[Sample]:
    """`count` transcripts: every (kind, form) and every distractor appear in turn, so each is measured evenly."""
    rng = random.Random(seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    pairs = [(kind, form) for kind, forms in KIND_FORMS.items() for form in forms]
    samples = []
    for n in range(count):
        first = pairs[n % len(pairs)]
        extra = [] if rng.random() < 0.6 else [rng.choice([p for p in pairs if p[0] != first[0]])]
        samples.append(sample(rng, fake, secrets=[first, *extra],
                              distractors=[DISTRACTOR_FORMS[n % len(DISTRACTOR_FORMS)],
                                           *rng.sample(DISTRACTOR_FORMS, k=rng.randint(0, 2))]))
    return samples


def every_form(*, seed: int = 36) -> list[Secret]:
    """One secret of each kind in each form (the tests' slice)."""
    rng = random.Random(seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    return [secret(kind, form, rng, fake) for kind, forms in KIND_FORMS.items() for form in forms]
