"""Sensitive data in what callers say, found and replaced before anything stores, logs, emits or exports it.

One detector for the whole product (calls, meetings, the bench): deterministic, offline, no model. A detected span
becomes its kind in brackets (`[card_number]`). Numbers are found however they are said or written (plain, grouped,
spoken as words, split over the caller's consecutive turns) through core.sensitive.numbers; python-stdnum and
phonenumbers validate what they know (Luhn, SSN ranges, ABA and IBAN checksums, national ids, phone numbers).

Usage: `scan = Scan(turns, policy)` over a transcript (`[(speaker, text)]`), then `scan.text(i)` for turn i,
`scan.quote(q)` for a quote of it (redacted so that it still matches the redacted turn), `scan.counts` and
`scan.heard`; `redact_text(text, policy)` for one free text (a summary, a message). docs/privacy.md#redaction.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field

from . import detect
from .numbers import FILLERS, SEPARATORS, Item, Token, digits_of, may_hold_number, runs, tokenize

# Bumped whenever a change finds more or less in the same words: stored calls at an older version are scanned again
# by `manage.py redact_stored_calls`.
DETECTOR_VERSION = "1"

CARD, GOVERNMENT_ID, BANK, EMAIL, PHONE, DATE_OF_BIRTH = (
    "card_number", "government_id", "bank_account", "email", "phone_number", "date_of_birth",
)
KINDS = (CARD, GOVERNMENT_ID, BANK, EMAIL, PHONE, DATE_OF_BIRTH)
# On for every organization unless it turns them off; the others are opt-in (a callback number is often the point).
DEFAULT_KINDS = (CARD, GOVERNMENT_ID, BANK)
# A call where one of these was heard keeps no recording (unless the organization chose to keep them).
RECORDING_KINDS = frozenset(DEFAULT_KINDS)


@dataclass(frozen=True)
class Policy:
    """What an organization redacts: `kinds`, numbers read in `region`, and its own `published` numbers (E.164),
    which are never a caller's."""

    kinds: frozenset[str] = frozenset(DEFAULT_KINDS)
    region: str = "US"
    published: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Span:
    turn: int
    start: int
    end: int
    kind: str
    group: int  # one detection (a card and its expiry and code, one number split over turns) counts once


_CVV_WORDS = ("security code", "cvv", "cvc", "csc", "cid", "card code", "verification code", "three digits",
              "four digits", "digits on the back", "expires", "expiry", "expiration", "exp date", "exp", "valid thru",
              "valid through", "good thru", "good through")
_SSN_WORDS = ("social", "ssn", "s s n", "social security", "security number", "ss number", "tax id", "itin")
_ID_WORDS = ("social", "security", "insurance", "national", "identity", "id", "ssn", "sin", "nhs", "bsn",
             "personal", "personnummer", "pesel", "cpf", "dni", "nie", "aadhaar", "health", "tax", "tfn", "passport")
_BANK_WORDS = ("routing", "aba", "bank", "transit", "wire", "direct deposit", "checking", "savings", "iban")
_ACCOUNT_WORDS = ("account",)
_DOB_WORDS = ("born", "birthday", "date of birth", "birth date", "birthdate", "dob", "d o b", "d.o.b")
# Words that say a number is the business's (an order, a booking): not a card, an SSN or a phone by chance.
def _phrases(phrases) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(re.escape(p).replace(r"\ ", r"\W+") for p in phrases) + r")\b",
                      re.IGNORECASE)


_CVV, _SSN, _ID, _BANK, _ACCOUNT, _DOB = (
    _phrases(words) for words in (_CVV_WORDS, _SSN_WORDS, _ID_WORDS, _BANK_WORDS, _ACCOUNT_WORDS, _DOB_WORDS))
_REFERENCE_WORDS = frozenset({"order", "confirmation", "reference", "ref", "tracking", "invoice", "ticket",
                              "booking", "reservation", "receipt", "transaction", "case", "table", "room",
                              "sku", "pin", "zip", "model", "serial", "extension", "ext", "policy",
                              "member", "loyalty", "rewards", "coupon", "promo", "voucher", "gift"})
_MONTHS = {name: i for i, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), start=1) for name in names}
_ORDINALS = frozenset({
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
    "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
    "twentieth", "thirtieth", "st", "nd", "rd", "th"})
_DATE_GLUE = frozenset({"of", "the", "in", "on"})
_TENS_WORDS = frozenset({"twenty", "thirty"})


_UNFOLDED = re.compile(r"\s{2,}|[^\S ]")


class _Turn:
    """One turn's text, its tokens and numbers; tokenized only when it may hold a number or a keyword asks."""

    __slots__ = ("_folded", "_has", "_runs", "_tokens", "_word_at", "speaker", "text")

    def __init__(self, speaker: str, text: str):
        self.speaker = speaker
        self.text = text
        self._tokens = self._runs = self._word_at = self._folded = None
        self._has: dict = {}

    @property
    def tokens(self) -> list[Token]:
        if self._tokens is None:
            self._tokens = tokenize(self.text)
        return self._tokens

    @property
    def runs(self) -> list[list[Item]]:
        if self._runs is None:
            self._runs = runs(self.tokens) if self.may_hold_number else []
        return self._runs

    @property
    def may_hold_number(self) -> bool:
        found = self._has.get(may_hold_number)
        if found is None:
            found = self._has[may_hold_number] = may_hold_number(self.text)
        return found

    def has(self, pattern: re.Pattern) -> bool:
        found = self._has.get(pattern)
        if found is None:
            found = self._has[pattern] = pattern.search(self.text) is not None
        return found

    @property
    def folded(self) -> tuple[str, list[int]]:
        """The text lowercased with every run of whitespace one space (as quotes are compared), and for each of its
        characters the position it came from."""
        if self._folded is None and not _UNFOLDED.search(self.text) and len(lowered := self.text.lower()) == len(
                self.text):
            self._folded = (lowered, None)  # the common case: folding only lowers the case
        if self._folded is None:
            chars, where, space = [], [], False
            for position, character in enumerate(self.text):
                if character.isspace():
                    if not space:
                        chars.append(" ")
                        where.append(position)
                    space = True
                    continue
                space = False
                chars.append(character.lower())
                where.append(position)
            self._folded = ("".join(chars), where)
        return self._folded

    def words_between(self, first: int, last: int) -> int:
        """Word tokens in tokens[first:last]."""
        if self._word_at is None:
            counts, seen = [0], 0
            for token in self.tokens:
                seen += token.kind == "word"
                counts.append(seen)
            self._word_at = counts
        return self._word_at[last] - self._word_at[first]


@dataclass
class _Run:
    turn: int
    items: list[Item]

    @property
    def digits(self) -> str:
        return digits_of(self.items)


class Scan:
    """A transcript scanned once: where each kind is, and the redacted texts and quotes."""

    def __init__(self, turns: list[tuple[str, str]], policy: Policy, *, detect_kinds: frozenset[str] | None = None):
        self.policy = policy
        self.kinds = frozenset(policy.kinds) | (detect_kinds or frozenset())
        self.turns = [_Turn(speaker, text) for speaker, text in turns]
        self._joined = "\x00".join(turn.text for turn in self.turns)
        self._starts = list(itertools.accumulate((len(turn.text) + 1 for turn in self.turns[:-1]), initial=0))
        self._said: dict[re.Pattern, frozenset[int]] = {}
        self.spans: list[Span] = []
        self._used: set[tuple[int, int]] = set()  # (turn, token index) of items already taken
        self._group = 0
        # What each detection was (its digits, or its text folded), to count a value said twice once. Kept in memory
        # for the length of the scan only.
        self._values: dict[int, tuple[str, str]] = {}
        self._scan()
        self._by_turn: dict[int, list[Span]] = {}
        for span in self.spans:
            self._by_turn.setdefault(span.turn, []).append(span)

    # -- results ------------------------------------------------------------------------------------------------

    @property
    def heard(self) -> frozenset[str]:
        return frozenset(span.kind for span in self.spans)

    @property
    def found(self) -> set[tuple[str, str]]:
        """(kind, value) of each redacted detection: a card with its expiry and code is one, a value said twice
        (the caller, then the agent reading it back) is one."""
        groups = {span.group for span in self.spans if span.kind in self.policy.kinds}
        return {self._values[group] for group in groups}

    @property
    def counts(self) -> dict[str, int]:
        """Distinct detections per redacted kind."""
        return dict(sorted(Counter(kind for kind, _ in self.found).items()))

    def text(self, index: int) -> str:
        return _render(self.turns[index].text, self._redacted(index), 0, len(self.turns[index].text))

    def _redacted(self, index: int) -> list[Span]:
        return [span for span in self._by_turn.get(index, []) if span.kind in self.policy.kinds]

    def quote(self, quote: str) -> str:
        """`quote` of the transcript, redacted as the turn it comes from: found in a turn (case and runs of
        whitespace aside, as the verification compares them), it becomes that part of the redacted turn, widened
        over any redacted span it cuts into; found nowhere, it is redacted on its own."""
        needle = " ".join(quote.split()).lower()
        if needle and not any(span.kind in self.policy.kinds for span in self.spans):
            return redact_text(quote, self.policy)  # nothing redacted in the turns: the quote alone may hold something
        if needle:
            for index, turn in enumerate(self.turns):
                folded, where = turn.folded
                at = folded.find(needle)
                if at < 0:
                    continue
                start, end = (where[at], where[at + len(needle) - 1] + 1) if where else (at, at + len(needle))
                spans = self._redacted(index)
                for span in spans:
                    if span.start < end and start < span.end:
                        start, end = min(start, span.start), max(end, span.end)
                return _render(turn.text, spans, start, end)
        return redact_text(quote, self.policy)

    # -- the scan -----------------------------------------------------------------------------------------------

    def _scan(self) -> None:
        if not any(turn.may_hold_number or "@" in turn.text or " at " in turn.text for turn in self.turns):
            return  # nothing any kind is made of: no digit, no number said, no e-mail address
        if BANK in self.kinds:
            self._ibans()  # before the cards: an IBAN's digits may pass the Luhn check
        chains = self._chains()
        if CARD in self.kinds:
            for chain in chains:
                self._cards(chain)
            self._card_keywords()
        if BANK in self.kinds:
            self._routing_and_accounts()
        if GOVERNMENT_ID in self.kinds:
            self._government_ids(chains)
        if EMAIL in self.kinds:
            for index, start, end in self._matches(detect.emails):
                self._add_chars(index, start, end, EMAIL)
        if DATE_OF_BIRTH in self.kinds:
            self._dates_of_birth()
        if PHONE in self.kinds:
            self._phones(chains)

    def _everywhere(self, pattern: re.Pattern) -> bool:
        """Whether any turn says `pattern` (one search over all the turns)."""
        return pattern.search(self._joined) is not None

    def _matches(self, spans_of) -> list[tuple[int, int, int]]:
        """(turn, start, end) of what `spans_of(text)` finds, run once over all the turns joined by NUL (which no
        pattern matches, so nothing spans two turns)."""
        found = []
        for start, end in spans_of(self._joined):
            turn = bisect.bisect_right(self._starts, start) - 1
            found.append((turn, start - self._starts[turn], end - self._starts[turn]))
        return found

    def _new_group(self) -> int:
        self._group += 1
        return self._group

    def _free(self, run_items: list[tuple[int, Item]]) -> bool:
        return not any((turn, item.token) in self._used for turn, item in run_items)

    def _take(self, run_items: list[tuple[int, Item]], kind: str, group: int | None = None) -> int:
        if group is None:
            group = self._new_group()
            self._values[group] = (kind, "".join(item.digits for _, item in run_items))
        for turn, item in run_items:
            # One span an item: words between two items of one number ("expires") stay; _render joins the spans
            # that only separators part.
            self._used.add((turn, item.token))
            self.spans.append(Span(turn, item.start, item.end, kind, group))
        return group

    def _overlaps(self, turn: int, start: int, end: int) -> bool:
        return any(s.turn == turn and s.start < end and start < s.end for s in self.spans)

    def _add_chars(self, turn: int, start: int, end: int, kind: str, group: int | None = None) -> None:
        if self._overlaps(turn, start, end):
            return
        if group is None:
            group = self._new_group()
            self._values[group] = (kind, " ".join(self.turns[turn].text[start:end].lower().split()))
        self.spans.append(Span(turn, start, end, kind, group))
        for index, token in enumerate(self.turns[turn].tokens):
            if token.start < end and start < token.end:
                self._used.add((turn, index))

    def _referenced(self, turn: int, item: Item) -> bool:
        """A reference number (order, booking, ...): one of _REFERENCE_WORDS among the 4 words before it."""
        tokens = self.turns[turn].tokens
        words = [t.text for t in tokens[max(0, item.token - 8):item.token] if t.kind == "word"][-4:]
        return any(word in _REFERENCE_WORDS for word in words)

    def _chains(self) -> list[list[_Run]]:
        """Runs that may be one number: runs of one turn with at most 4 words between them, and the run that ends
        a caller's turn with the one that starts their next turn (at most 2 agent turns between)."""
        chains: list[list[_Run]] = []
        last_caller: tuple[int, list[_Run]] | None = None  # (turn, its last chain) when the turn ends on a number
        for index, turn in enumerate(self.turns):
            chain: list[_Run] | None = None
            for position, items in enumerate(turn.runs):
                run = _Run(index, items)
                if self._referenced(index, items[0]):  # an order number is never the rest of a card
                    chain = [run]
                    chains.append(chain)
                    continue
                if chain is not None and turn.words_between(chain[-1].items[-1].next_token, items[0].token) <= 4:
                    chain.append(run)
                    continue
                if (position == 0 and turn.speaker == "caller" and last_caller is not None
                        and index - last_caller[0] <= 3 and turn.words_between(0, items[0].token) <= 4):
                    chain = last_caller[1]
                    chain.append(run)
                    continue
                chain = [run]
                chains.append(chain)
            if turn.speaker == "caller":
                ends_on_number = bool(turn.runs) and turn.words_between(turn.runs[-1][-1].next_token,
                                                                        len(turn.tokens)) <= 2
                last_caller = (index, chain) if ends_on_number else None
        return chains

    def _cards(self, chain: list[_Run]) -> None:
        """Cards in a chain: a window of 13 to 19 digits that starts where a number starts (a card is not said from
        the middle of a longer number) and passes the Luhn check (and, when it is a part of a longer number, looks
        like a card some network issues). Then the expiry and code said right after it in the same turn."""
        flat = [(run, k) for run in chain for k in range(len(run.items))]
        i = 0
        while i < len(flat):
            run, k = flat[i]
            if k != 0 or self._referenced(run.turn, run.items[0]):
                i += 1
                continue
            best, digits = None, ""
            for j in range(i, len(flat)):
                digits += flat[j][0].items[flat[j][1]].digits
                if len(digits) > 19:
                    break
                if len(digits) < 13:
                    continue
                whole = flat[j][1] == len(flat[j][0].items) - 1
                if flat[j][0] is run:  # one number as said: the Luhn check alone, or a card's shape for a part
                    card = detect.is_card(digits, branded=not whole)
                else:  # numbers joined over words or turns: groups of a card's size, and a card's shape
                    card = whole and digits[0] in "23456" and detect.is_card(digits, branded=False) and all(
                        len(r.digits) >= 4 for r in {id(r): r for r, _ in flat[i:j]}.values())
                if card and (best is None or flat[best][0] is not run or flat[j][0] is run):
                    best = j  # a card within the number as said wins over one joined with the next
            pairs = [(r.turn, r.items[n]) for r, n in flat[i:best + 1]] if best is not None else []
            if best is None or not self._free(pairs):
                i += 1
                continue
            group = self._take(pairs, CARD)
            i = best + 1
            last_run, last = flat[best]
            turn = self.turns[last_run.turn]
            # The expiry and security code said right after it, in the same turn: the rest of its number, then whole
            # numbers of an expiry's or a code's size with at most two words before each ("expires", "code").
            extra = [(last_run.turn, item) for item in last_run.items[last + 1:]]
            taken = sum(len(item.digits) for _, item in extra)
            previous = last_run.items[-1]
            while i < len(flat) and flat[i][1] != 0:
                i += 1
            while taken <= 8 and i < len(flat) and flat[i][0].turn == last_run.turn:
                following = flat[i][0]
                digits = following.digits
                if turn.words_between(previous.next_token, following.items[0].token) > 2 or not (
                        3 <= len(digits) <= 4 or (len(digits) == 6 and 1 <= int(digits[:2]) <= 12)) or (
                        taken + len(digits) > 8):
                    break
                extra += [(following.turn, item) for item in following.items]
                taken += len(digits)
                previous = following.items[-1]
                i += len(following.items)
            if extra and taken <= 8 and self._free(extra):
                self._take(extra, CARD, group)

    def _runs_after(self, index: int, token: int, *, words: int = 8) -> list[_Run]:
        """The runs of turn `index` that start within `words` words after token `token`; when the turn says no
        number after it, the first run of the next turn said by the other party or the same caller."""
        turn = self.turns[index]
        found = [_Run(index, items) for items in turn.runs
                 if items[0].token >= token and turn.words_between(token, items[0].token) <= words]
        if found or index + 1 >= len(self.turns):
            return found[:2]
        following = self.turns[index + 1]
        if following.runs and following.words_between(0, following.runs[0][0].token) <= 4:
            return [_Run(index + 1, following.runs[0])]
        return []

    def _keyword_positions(self, index: int, phrases) -> list[int]:
        """Token indexes just after each occurrence of a phrase in turn `index`."""
        turn = self.turns[index]
        words = [(k, t.text) for k, t in enumerate(turn.tokens) if t.kind == "word"]
        positions = []
        for phrase in phrases:
            parts = phrase.split()
            for w in range(len(words) - len(parts) + 1):
                if all(words[w + p][1] == part for p, part in enumerate(parts)):
                    positions.append(words[w + len(parts) - 1][0] + 1)
        return sorted(set(positions))

    def _card_keywords(self) -> None:
        """A security code (3 or 4 digits) or an expiry (a month and a year) after "security code", "CVV",
        "expires" and the like, in the same turn or at the start of the next."""
        if not self._everywhere(_CVV):
            return
        for index, turn in enumerate(self.turns):
            if index not in self._saying(_CVV):
                continue
            for position in self._keyword_positions(index, _CVV_WORDS):
                month = next((k for k in range(position, min(position + 4, len(turn.tokens)))
                              if turn.tokens[k].text in _MONTHS), None)
                for run in self._runs_after(index, position):
                    digits = run.digits
                    pairs = [(run.turn, item) for item in run.items]
                    if not self._free(pairs) or self._referenced(run.turn, run.items[0]):
                        continue
                    # Part of the card said before it, if one was: one detection, not three.
                    card = next((span.group for span in reversed(self.spans)
                                 if span.kind == CARD and span.turn <= index), None)
                    if month is not None and run.turn == index and len(digits) in (2, 4):
                        self._add_chars(index, turn.tokens[month].start, run.items[-1].end, CARD, card)
                        break
                    if 3 <= len(digits) <= 4 or (len(digits) in (4, 6) and 1 <= int(digits[:2]) <= 12):
                        self._take(pairs, CARD, card)
                        break

    def _ibans(self) -> None:
        for index, start, end in self._matches(detect.ibans):
            self._add_chars(index, start, end, BANK)

    def _context(self, index: int, phrases, back: int = 2) -> bool:
        saying = self._saying(phrases)
        return any(k in saying for k in range(max(0, index - back), index + 1))

    def _saying(self, pattern: re.Pattern) -> frozenset[int]:
        """The turns that say `pattern`, found in one pass over all of them."""
        found = self._said.get(pattern)
        if found is None:
            found = self._said[pattern] = frozenset(
                bisect.bisect_right(self._starts, match.start()) - 1 for match in pattern.finditer(self._joined))
        return found

    def _routing_and_accounts(self) -> None:
        """ABA routing numbers said about a bank, and the account numbers said with them (4 to 17 digits in a
        turn that says "account", from two turns before to three after); an account number also counts when said
        with "checking", "savings" or "bank" without a routing number."""
        if not self._everywhere(_BANK) and not self._everywhere(_ACCOUNT):
            return
        routed = []
        for index, turn in enumerate(self.turns):
            for items in turn.runs:
                pairs = [(index, item) for item in items]
                if detect.is_routing(digits_of(items)) and self._free(pairs) and self._context(index, _BANK):
                    routed.append((index, self._take(pairs, BANK)))
        for index, turn in enumerate(self.turns):
            accounts = self._saying(_ACCOUNT)
            asked = index > 0 and turn.speaker == "caller" and index - 1 in accounts
            if index not in accounts and not asked:
                continue
            near = [group for at, group in routed if at - 2 <= index <= at + 3]
            if not near and not self._context(index, _BANK, back=2):
                continue
            for items in turn.runs:
                pairs = [(index, item) for item in items]
                # Asked in the turn before: the answer starts the turn ("It's 1234...", not "call us at ...").
                if index not in accounts and turn.words_between(0, items[0].token) > 4:
                    continue
                if 4 <= len(digits_of(items)) <= 17 and self._free(pairs) and not self._referenced(index, items[0]):
                    self._take(pairs, BANK, near[0] if near else None)

    def _government_ids(self, chains: list[list[_Run]]) -> None:
        region = (self.policy.region or "US").upper()
        for chain in chains:
            if sum(len(item.digits) for run in chain for item in run.items) < 9:
                continue  # every id looked for here has 9 digits or more
            for first in range(len(chain)):
                digits, pairs = "", []
                for run in chain[first:]:
                    digits += run.digits
                    pairs += [(run.turn, item) for item in run.items]
                    if len(digits) >= 9:
                        break
                if not self._free(pairs) or self._referenced(chain[first].turn, chain[first].items[0]):
                    continue
                turn = chain[first].turn
                grouped = [len(item.digits) for _, item in pairs] == [3, 2, 4] and not any(
                    item.spoken for _, item in pairs)
                if detect.is_ssn(digits) and (grouped or self._context(turn, _SSN)):
                    self._take(pairs, GOVERNMENT_ID)
                    continue
                if region != "US" and self._context(turn, _ID):
                    whole = "".join(run.digits for run in chain[first:])
                    for candidate in dict.fromkeys((digits, whole)):
                        if detect.national_id_digits(candidate, region):
                            taken = pairs if candidate == digits else [
                                (run.turn, item) for run in chain[first:] for item in run.items]
                            if self._free(taken):
                                self._take(taken, GOVERNMENT_ID)
                            break
        if region != "US":
            for index, turn in enumerate(self.turns):
                for start, end in detect.national_ids(turn.text, region):
                    self._add_chars(index, start, end, GOVERNMENT_ID)

    def _dates_of_birth(self) -> None:
        """A date (two of day, month and year) within the words after "born", "birthday", "date of birth" or
        "DOB", in the same turn or at the start of the next."""
        if not self._everywhere(_DOB):
            return
        for index, turn in enumerate(self.turns):
            if index not in self._saying(_DOB):
                continue
            for position in self._keyword_positions(index, _DOB_WORDS):
                if self._date_after(index, position, 10):
                    continue
                if index + 1 < len(self.turns) and turn.words_between(position, len(turn.tokens)) <= 3:
                    self._date_after(index + 1, 0, 6)

    def _date_after(self, index: int, position: int, within: int) -> bool:
        turn = self.turns[index]
        tokens = turn.tokens
        k, seen = position, 0
        while k < len(tokens) and seen <= within and not _date_token(tokens[k]):
            seen += tokens[k].kind == "word"
            k += 1
        if k >= len(tokens) or seen > within:
            return False
        start, end, parts, numbers = k, k, 0, 0
        while k < len(tokens):
            token = tokens[k]
            if _date_token(token):
                end = k
                if token.text in _MONTHS:
                    parts += 1
                elif token.kind == "digits" or token.text in _ORDINALS:
                    numbers += 1
                k += 1
            elif token.text in _DATE_GLUE or (token.kind == "mark" and token.text in ",/-."):
                k += 1
            else:
                break
        if parts + min(numbers, 2) + self._spoken_numbers(index, start, end) < 2:
            return False
        self._add_chars(index, tokens[start].start, tokens[end].end, DATE_OF_BIRTH)
        return True

    def _spoken_numbers(self, index: int, first: int, last: int) -> int:
        """Number words among tokens[first..last] that make a day or a year ("third", "nineteen eighty-five")."""
        items = [item for items in self.turns[index].runs for item in items
                 if item.spoken and first <= item.token <= last]
        return min(len(items), 2)

    def _phones(self, chains: list[list[_Run]]) -> None:
        region = self.policy.region or "US"
        for chain in chains:
            first = 0
            while first < len(chain):
                taken = False
                for last in range(min(len(chain), first + 3), first, -1):
                    runs_ = chain[first:last]
                    pairs = [(run.turn, item) for run in runs_ for item in run.items]
                    digits = "".join(run.digits for run in runs_)
                    if not 7 <= len(digits) <= 15 or not self._free(pairs):
                        continue
                    if len(runs_) > 1 and any(len(run.digits) < 3 for run in runs_):
                        continue  # a number said in parts says them in groups (area code, exchange, line)
                    head = runs_[0]
                    if self._referenced(head.turn, head.items[0]):
                        continue
                    text = self.turns[head.turn].text
                    plus = text[max(0, head.items[0].start - 2):head.items[0].start].strip().endswith("+")
                    number = detect.phone(digits, region, plus)
                    if number is not None and number not in self.policy.published:
                        self._take(pairs, PHONE)
                        first, taken = last, True
                        break
                if not taken:
                    first += 1


def _date_token(token: Token) -> bool:
    return (token.kind == "digits" or token.text in _MONTHS or token.text in _ORDINALS
            or (token.kind == "word" and (token.text in _NUMBER_WORDS)))


_NUMBER_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                           "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                           "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "oh",
                           "hundred", "thousand"})

_GAP = re.compile(r"[\s" + re.escape("".join(SEPARATORS)) + r"]*(?:(?:" + "|".join(sorted(FILLERS)) +
                  r")[\s" + re.escape("".join(SEPARATORS)) + r"]*)*", re.IGNORECASE)


def _render(text: str, spans: list[Span], start: int, end: int) -> str:
    """text[start:end] with each span (inside it) replaced by `[kind]`; spans of one kind with only separators
    between them become one."""
    spans = sorted((s for s in spans if start <= s.start and s.end <= end), key=lambda s: (s.start, s.end))
    merged: list[list] = []
    for span in spans:
        overlapping = merged and span.start < merged[-1][1]
        if overlapping or (merged and merged[-1][2] == span.kind and _GAP.fullmatch(text[merged[-1][1]:span.start])):
            merged[-1][1] = max(merged[-1][1], span.end)
        else:
            merged.append([span.start, span.end, span.kind])
    out, cursor = [], start
    for s, e, kind in merged:
        out.append(text[cursor:s])
        out.append(f"[{kind}]")
        cursor = e
    out.append(text[cursor:end])
    return "".join(out)


def redact_text(text: str, policy: Policy) -> str:
    """One free text (a summary, a message, an answer) redacted on its own."""
    if not text:
        return text
    return Scan([("caller", text)], policy).text(0)


@dataclass
class Tally:
    """What one write redacted across its texts: distinct detections per kind (a card in the transcript and the
    summary is one) and the kinds heard (redacted or not)."""

    found: set = field(default_factory=set)
    heard: set = field(default_factory=set)

    def add(self, scan: Scan) -> None:
        self.found |= scan.found
        self.heard |= scan.heard

    @property
    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(kind for kind, _ in self.found).items()))


class Redactor:
    """Redacts the free texts of one write under one policy and tallies what it found. `detect` adds kinds that are
    looked for without being redacted (the recording rule needs to know a card was heard)."""

    def __init__(self, policy: Policy, *, detect: frozenset[str] = RECORDING_KINDS):
        self.policy = policy
        self.detect = detect
        self.tally = Tally()

    def scan(self, turns: list[tuple[str, str]]) -> Scan:
        scan = Scan(turns, self.policy, detect_kinds=self.detect)
        self.tally.add(scan)
        return scan

    def text(self, value):
        """A free text redacted (None and "" stay as they are)."""
        if not isinstance(value, str) or not value:
            return value
        return self.scan([("caller", value)]).text(0)


__all__ = [
    "CARD", "DEFAULT_KINDS", "DETECTOR_VERSION", "KINDS", "RECORDING_KINDS", "Policy", "Redactor", "Scan", "Span",
    "Tally", "redact_text",
]
