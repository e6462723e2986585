"""The detector (core.sensitive) on its own: phone-speak, each kind's rules, what it leaves alone. No database."""

import pytest

from core.sensitive import DEFAULT_KINDS, KINDS, Policy, Scan, redact_text
from core.sensitive.numbers import digits_of, runs, tokenize

EVERY = Policy(kinds=frozenset(KINDS), published=frozenset({"+14155550100"}))
DEFAULT = Policy(kinds=frozenset(DEFAULT_KINDS))


@pytest.mark.parametrize(("said", "digits"), [
    ("four one one one", "4111"),
    ("oh four, oh oh", "0400"),
    ("double five triple two", "55222"),
    ("forty-one eleven", "4111"),
    ("forty one eleven", "4111"),
    ("nineteen eighty-five", "1985"),
    ("six hundred twelve", "612"),
    ("four hundred", "400"),
    ("4111-1111 1111.1111", "4111111111111111"),
    ("(415) 555-0100", "4155550100"),
    ("four uh one one one", "4111"),
])
def test_phone_speak_becomes_digits(said, digits):
    assert [digits_of(run) for run in runs(tokenize(said))] == [digits]


@pytest.mark.parametrize(("said", "numbers"), [("the o ring", []), ("a pizza for one, please", ["1"]),
                                               ("at 3:30", ["3", "30"]), ("J6722063", [])])
def test_words_that_are_not_numbers_stay_words(said, numbers):
    assert [digits_of(run) for run in runs(tokenize(said))] == numbers


@pytest.mark.parametrize(("text", "expected"), [
    ("card 4111111111111111 thanks", "card [card_number] thanks"),
    ("it's four one one one, one one one one, one one one one, one one one one", "it's [card_number]"),
    ("forty-one eleven, eleven eleven, eleven eleven, eleven eleven", "[card_number]"),
    ("3782 822463 10005", "[card_number]"),
    ("4111 1111 1111 1111, expires 12/27, code 123", "[card_number], expires [card_number], code [card_number]"),
    ("my social is 123-45-6789", "my social is [government_id]"),
    ("routing 011000015 account 12345678", "routing [bank_account] account [bank_account]"),
    ("IBAN GB82 WEST 1234 5698 7654 32.", "IBAN [bank_account]."),
])
def test_the_default_kinds(text, expected):
    assert redact_text(text, DEFAULT) == expected


@pytest.mark.parametrize("text", [
    "Your order number is 1234 5678 9012 3456.",  # 16 digits failing Luhn
    "order number 4111 1111 1111 1112",
    "That's $12.50 for 2 pizzas at 6:30.",
    "Can I book March 3 at 7 pm?",
    "Created 2026-11-27T15:04:45.123Z, call 4d7a0c1e-8b1f-4c2a-9e3d-111111111111",  # timestamps and ids
    "Confirmation J6722063, zip code 94107, table for 12.",
    "Call us at (415) 555-0100.",
    "The social event is on 123 Main St.",
])
def test_what_is_not_redacted(text):
    assert redact_text(text, EVERY) == text


def test_opt_in_kinds_only_when_chosen():
    text = "mail pat.lee@example.com or call 415-555-0188, born March 3, 1985"
    assert redact_text(text, DEFAULT) == text
    assert redact_text(text, EVERY) == "mail [email] or call [phone_number], born [date_of_birth]"


def test_spoken_email_phone_and_date_of_birth():
    assert redact_text("it's jo dot lee at gmail dot com", EVERY) == "it's [email]"
    assert redact_text("four one five, five five five, oh one eight eight", EVERY) == "[phone_number]"
    assert redact_text("I was born on the third of March nineteen eighty-five.", EVERY) == \
        "I was born on the [date_of_birth]."


def test_a_card_split_over_the_callers_turns():
    scan = Scan([("caller", "it's 4111 1111"), ("agent", "go on"), ("caller", "1111 1111"),
                 ("agent", "and the security code?"), ("caller", "one two three")], DEFAULT)
    assert [scan.text(i) for i in range(5)] == ["it's [card_number]", "go on", "[card_number]",
                                                "and the security code?", "[card_number]"]
    assert scan.counts == {"card_number": 1}


def test_an_ssn_asked_by_the_agent_and_said_in_words():
    scan = Scan([("agent", "What's your social security number?"),
                 ("caller", "one two three, four five, six seven eight nine")], DEFAULT)
    assert scan.text(1) == "[government_id]"


def test_a_number_read_back_counts_once():
    scan = Scan([("caller", "4111 1111 1111 1111"), ("agent", "that's 4111111111111111, right?")], DEFAULT)
    assert scan.counts == {"card_number": 1}


@pytest.mark.parametrize(("region", "text", "expected"), [
    ("ES", "mi DNI es 12345678Z", "mi DNI es [government_id]"),
    ("GB", "my NHS number is 943 476 5919", "my NHS number is [government_id]"),
    ("CA", "my social insurance number is 046 454 286", "my social insurance number is [government_id]"),
])
def test_national_identity_numbers_of_the_organizations_country(region, text, expected):
    assert redact_text(text, Policy(kinds=frozenset(DEFAULT_KINDS), region=region)) == expected


def test_quotes_are_redacted_as_the_turn_they_quote():
    scan = Scan([("caller", "Sure, my card is 4111 1111 1111 1111, thanks")], DEFAULT)
    assert scan.quote("MY CARD IS 4111") == "my card is [card_number]"
    assert scan.quote("not in the call 4111111111111111") == "not in the call [card_number]"


def test_redacting_twice_changes_nothing():
    once = redact_text("card 4111 1111 1111 1111 and social 123-45-6789", DEFAULT)
    assert redact_text(once, DEFAULT) == once
