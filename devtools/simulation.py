"""Realistic simulated calls, driven through the agent runtime's HTTP API exactly as the runtime drives it.

`RuntimeClient` sends real HTTP requests: in process through Django's test `Client` (the whole middleware and
view stack, no server needed), or with `requests` against a running server (`base_url`). `Simulator` reads the
org's knowledge, then plays scenarios: start the call, report tool events as they fire, complete it, upload a
one-second WAV recording (before completion in `recording_first`).
"""

import io
import json
import math
import random
import struct
import unicodedata
import uuid
import wave
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode, urlparse
from zoneinfo import ZoneInfo

import requests
from django.conf import settings
from django.test import Client

from knowledge.models import Calendar, EscalationRule, TeamMember
from knowledge.services import calendar_create, escalation_rule_create
from knowledge.weekly_hours import DAYS
from orgs.models import Location

SCENARIOS = [
    "order", "message", "callback", "escalation", "booking", "info", "robocall", "wrong_number",
    "withheld_number", "recording_first", "caller_cancels_order",
]
MIXED_WEIGHTS = {
    "order": 24, "info": 18, "message": 10, "callback": 8, "booking": 8, "escalation": 4, "robocall": 7,
    "wrong_number": 5, "withheld_number": 6, "recording_first": 6, "caller_cancels_order": 4,
}

FIRST_NAMES = [
    "Jordan", "Avery", "Lena", "Marcus", "Sofia", "Daniel", "Aisha", "Tomás", "Grace", "Hiro", "Nina", "Omar",
    "Chloe", "Ravi", "Elena", "Kwame", "Maya", "Liam", "Zoe", "Mateo", "Ingrid", "Yusuf", "Hannah", "Diego",
]
LAST_NAMES = [
    "Miles", "Brooks", "Park", "Nguyen", "Rossi", "Okafor", "Kowalski", "Haddad", "Silva", "Tanaka", "Fischer",
    "Murphy", "Khan", "Alvarez", "Larsen", "Mensah", "Dubois", "Cohen", "Patel", "Reyes", "O'Brien", "Ivanova",
]
AREA_CODES = ["415", "510", "650", "212", "646", "312", "617", "206", "512", "303", "404", "702"]

# A small catalog: (name, unit price cents, modifier groups [(group, [(option, price)])], item questions)
CATALOG = [
    ("Margherita pizza", 1450, [("Size", [("12-inch", 0), ("16-inch", 450)]),
                                ("Crust", [("Thin", 0), ("Gluten-free", 300)])], []),
    ("Pepperoni pizza", 1650, [("Size", [("12-inch", 0), ("16-inch", 450)]),
                               ("Extra toppings", [("Extra cheese", 200), ("Jalapeños", 100), ("Mushrooms", 150)])],
     []),
    ("Garden Vegan pizza", 1750, [("Size", [("12-inch", 0), ("16-inch", 450)])], []),
    ("Caesar salad", 950, [("Dressing", [("On the side", 0), ("Tossed", 0)]), ("Add protein", [("Chicken", 350)])],
     []),
    ("Garlic knots", 650, [("Dip", [("Marinara", 0), ("Ranch", 75)])], []),
    ("Tiramisu", 800, [], [("Any allergies we should know about?", ["No", "Nut allergy, please be careful"])]),
    ("Sparkling water", 300, [], []),
]
ORDER_QUESTIONS = [
    ("Pickup or delivery?", ["Pickup", "Delivery"]),
    ("Anything for the kitchen?", ["Please cut the pizza in squares", "No notes", "Extra napkins please"]),
]
PROFILE_ID = uuid.UUID("6d1f4b52-6a43-4c1e-9d8e-2f3a1c0b7e11")
PROFILE_NAME = "Phone orders"


def _stable_uuid(*parts: str) -> str:
    return str(uuid.uuid5(PROFILE_ID, "/".join(parts)))


def wav_tone(seconds: float = 1.0, frequency: float = 440.0, rate: int = 8000) -> bytes:
    """A real, small WAV: `seconds` of a sine tone, 16-bit mono."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        samples = range(int(rate * seconds))
        frames = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * frequency * i / rate))) for i in samples)
        out.writeframes(frames)
    return buffer.getvalue()


class RuntimeRequestFailed(Exception):
    """A runtime request that did not succeed (status and body), so the command can say what went wrong."""


class RuntimeClient:
    """The agent runtime's side of the internal API: JSON in, JSON out, the service token on every request."""

    def __init__(self, *, org_id: str, token: str | None = None, base_url: str | None = None):
        self.org_id = str(org_id)
        self.token = token if token is not None else settings.AGENT_RUNTIME_TOKEN
        self.base_url = base_url.rstrip("/") if base_url else None
        self.prefix = f"/internal/agent/v1/orgs/{self.org_id}"
        if self.base_url:
            self._session = requests.Session()
        else:
            host = urlparse(settings.BASE_URL).hostname or "localhost"
            self._client = Client(raise_request_exception=False, HTTP_HOST=host)

    def request(self, method: str, path: str, *, json_body=None, body: bytes | None = None,
                content_type: str | None = None, headers: dict | None = None, ok=(200, 201, 304)):
        url = f"{self.prefix}{path}"
        headers = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        if json_body is not None:
            body, content_type = json.dumps(json_body).encode(), "application/json"
        if self.base_url:
            if content_type:
                headers["Content-Type"] = content_type
            response = self._session.request(method, self.base_url + url, data=body, headers=headers, timeout=30)
            status, text, response_headers = response.status_code, response.content, response.headers
        else:
            extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
            response = self._client.generic(method, url, data=body or b"", content_type=content_type, **extra)
            status, text, response_headers = response.status_code, response.content, response.headers
        if status not in ok:
            raise RuntimeRequestFailed(f"{method} {url} -> {status}: {text[:500].decode(errors='replace')}")
        return status, (json.loads(text) if text else None), response_headers

    def knowledge(self, etag: str | None = None):
        headers = {"If-None-Match": etag} if etag else {}
        return self.request("GET", "/knowledge", headers=headers)

    def start(self, **body):
        return self.request("POST", "/calls", json_body=body)[1]["data"]

    def availability(self, calendar_id: str, start: datetime, end: datetime) -> list[dict]:
        query = urlencode({"from": _iso(start), "to": _iso(end)})
        return self.request("GET", f"/calendars/{calendar_id}/availability?{query}")[1]["data"]["slots"]

    def event(self, call_id: str, **body):
        return self.request("POST", f"/calls/{call_id}/events", json_body=body)[1]["data"]

    def complete(self, call_id: str, **body):
        return self.request("POST", f"/calls/{call_id}/complete", json_body=body)[1]["data"]

    def upload_recording(self, call_id: str, audio: bytes, *, duration_seconds: int | None = None,
                         content_type: str = "audio/wav"):
        path = f"/calls/{call_id}/recording"
        if duration_seconds is not None:
            path += f"?duration_seconds={duration_seconds}"
        return self.request("PUT", path, body=audio, content_type=content_type)[1]["data"]


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# What callers ask that a demo knowledge base does not answer (the Unanswered questions page fills from these).
UNANSWERABLE = [
    "Do you have gluten-free pasta?",
    "Is there parking for a van nearby?",
    "Can I bring my dog to the patio?",
    "Do you sell gift cards?",
    "Do you cater weddings for 150 people?",
]


@dataclass
class Conversation:
    """A transcript being written turn by turn, with the tool events that fired along the way."""

    rng: random.Random
    turns: list[dict] = field(default_factory=list)
    clock: float = 0.0
    tools: list[dict] = field(default_factory=list)

    def say(self, speaker: str, text: str) -> str:
        self.turns.append({"speaker": speaker, "text": text, "offset_seconds": round(self.clock, 1)})
        self.clock += max(2.0, len(text) / 14) + self.rng.uniform(0.4, 2.5)
        return text

    def agent(self, text: str) -> str:
        return self.say("agent", text)

    def caller(self, text: str) -> str:
        return self.say("caller", text)

    def tool(self, type_: str, label: str, data: dict | None = None):
        self.tools.append({"event_id": f"evt-{uuid.uuid4().hex[:16]}", "type": type_, "label": label,
                           "offset_seconds": round(self.clock, 1), "data": data or {}})


class Simulator:
    """Plays scenarios against one org through a RuntimeClient. Returns one `{call_id, scenario}` per call."""

    def __init__(self, client: RuntimeClient, *, seed: int | None = None, now: datetime | None = None,
                 location_id: str | None = None):
        self.client = client
        self.rng = random.Random(seed)
        self.now = now or datetime.now(tz=UTC)
        self.audio = wav_tone()
        _, body, _ = client.knowledge()
        self.knowledge = body["data"]
        # Every call at this one location (`simulate_calls --location`), else at one picked at random per call.
        self.locations = self.knowledge["locations"]
        if location_id is not None:
            self.locations = [loc for loc in self.locations if loc["id"] == str(location_id)]
            if not self.locations:
                raise ValueError(f"No location {location_id} in this organization.")
        self.greeting_org = self.knowledge["organization"]["name"]
        self.call_locations: dict[str, str | None] = {}  # runtime call id -> its location id (the fields that apply)

    # --- helpers ---------------------------------------------------------------------------------------

    def _person(self) -> tuple[str, str, str]:
        first, last = self.rng.choice(FIRST_NAMES), self.rng.choice(LAST_NAMES)
        number = f"+1{self.rng.choice(AREA_CODES)}55501{self.rng.randint(0, 99):02d}"
        local = unicodedata.normalize("NFKD", f"{first}.{last}".lower()).encode("ascii", "ignore").decode()
        return f"{first} {last}", number, f"{local.replace(chr(39), '')}@example.com"

    def _location(self):
        return self.rng.choice(self.locations) if self.locations else None

    def _start(self, *, from_number: str | None, ago_minutes: float | None = None) -> tuple[str, datetime, dict]:
        ago = ago_minutes if ago_minutes is not None else self.rng.uniform(10, 60 * 24 * 3)
        started_at = self.now - timedelta(minutes=ago)
        runtime_id = f"rt-{uuid.uuid4().hex}"
        location = self._location()
        call = self.client.start(
            call_id=runtime_id, started_at=_iso(started_at), from_number=from_number,
            location_id=location["id"] if location else None,
        )
        self.call_locations[runtime_id] = location["id"] if location else None
        return runtime_id, started_at, call

    def _greet(self, convo: Conversation, location) -> None:
        where = f" {location['name']}" if location else ""
        convo.agent(f"Thanks for calling {self.greeting_org}{where}, this is the virtual assistant. How can I help?")

    def _finish(self, runtime_id: str, started_at: datetime, convo: Conversation, *, recording_first=False,
                **completion) -> dict:
        for tool in convo.tools:
            self.client.event(runtime_id, **tool)
        if completion.get("classification") == "real_engagement" and "fields" not in completion:
            completion["fields"] = self._call_fields(convo, self.call_locations.get(runtime_id), started_at)
        duration = int(convo.clock) + self.rng.randint(3, 12)
        if recording_first:
            self._upload(runtime_id)
        call = self.client.complete(
            runtime_id, ended_at=_iso(started_at + timedelta(seconds=duration)), duration_seconds=duration,
            transcript=convo.turns, **completion,
        )
        if not recording_first:
            self._upload(runtime_id)
        return call

    def _call_fields(self, convo: Conversation, location_id: str | None, started_at: datetime) -> dict:
        """A value for each of the org's call fields that applies to the call's location, which the caller says
        (one turn each), quoted as its evidence: a demo org's required fields are always reported."""
        reported = {}
        for spec in self.knowledge.get("call_fields", []):
            if spec["location_ids"] is not None and location_id not in spec["location_ids"]:
                continue
            kind = spec["type"]
            if kind == "number":
                value = self.rng.randint(1, 8)
            elif kind == "boolean":
                value = self.rng.random() < 0.5
            elif kind == "date":
                value = (started_at + timedelta(days=self.rng.randint(0, 14))).date().isoformat()
            elif kind == "enum":
                value = self.rng.choice(spec["choices"])
            else:
                value = self.rng.choice(["no preference", "as soon as possible", "by the window"])
            spoken = ("yes" if value else "no") if isinstance(value, bool) else str(value)
            quote = f"{spec['label']}: {spoken}"
            convo.caller(f"{quote}.")
            reported[spec["name"]] = {"value": value, "evidence": quote}
        return reported

    def _upload(self, runtime_id: str) -> None:
        if self.knowledge["organization"]["call_recording_enabled"]:
            self.client.upload_recording(runtime_id, self.audio, duration_seconds=1)

    def _checks(self, convo: Conversation, specs: list[tuple[str, str, list[str], str | None]]) -> list[dict]:
        """Quality checks whose evidence quotes are real substrings of the transcript."""
        checks = []
        for name, verdict, quotes, gap_type in specs:
            checks.append({"name": name, "verdict": verdict, "evidence": quotes, "gap_type": gap_type})
        for check in checks:
            for quote in check["evidence"]:
                assert any(quote in turn["text"] for turn in convo.turns), quote
        return checks

    @staticmethod
    def _quote(text: str, words: int = 7) -> str:
        return " ".join(text.split()[:words])

    # --- scenarios -------------------------------------------------------------------------------------

    def play(self, scenario: str) -> list[dict]:
        if scenario == "mixed":
            scenario = self.rng.choices(list(MIXED_WEIGHTS), weights=list(MIXED_WEIGHTS.values()))[0]
        return getattr(self, f"_scenario_{scenario}")()

    def _order_call(self, *, name: str, number: str, ago_minutes: float | None = None, recording_first=False,
                    window_minutes: int | None = None) -> dict:
        runtime_id, started_at, call = self._start(from_number=number, ago_minutes=ago_minutes)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        picks = self.rng.sample(CATALOG, k=self.rng.randint(1, 3))
        items, spoken = [], []
        for item_name, price, groups, questions in picks:
            quantity = self.rng.choice([1, 1, 1, 2, 3])
            modifiers = []
            for group_name, options in groups:
                option, option_price = self.rng.choice(options)
                modifiers.append({"group_id": _stable_uuid("group", item_name, group_name), "group_name": group_name,
                                  "option_name": option, "price_cents": option_price})
            answers = []
            for prompt, choices in questions:
                answers.append({"question_id": _stable_uuid("q", item_name, prompt), "prompt": prompt,
                                "answer": self.rng.choice(choices)})
            items.append({"catalog_item_id": _stable_uuid("item", item_name), "name": item_name, "quantity": quantity,
                          "unit_price_cents": price, "modifiers": modifiers, "answers": answers})
            extras = ", ".join(m["option_name"].lower() for m in modifiers)
            spoken.append(f"{quantity} {item_name}" + (f" ({extras})" if extras else ""))
        convo.caller(f"Hi, I'd like to place an order for {' and '.join(spoken)}.")
        convo.tool("tool", "Asked about the menu")
        fulfillment = self.rng.choice(["Pickup", "Delivery"])
        convo.agent("Sure. Is that for pickup or delivery? And can I get a name for the order?")
        convo.caller(f"{fulfillment}, please. The name is {name}.")
        minutes = self.rng.choice([20, 25, 30, 35, 45])
        confirmation = convo.agent(
            f"Great, {name.split()[0]}. I have {'; '.join(spoken)} for {fulfillment.lower()}. "
            f"It should be ready in about {minutes} minutes."
        )
        convo.tool("tool", "Placed an order")
        thanks = convo.caller(self.rng.choice(["Perfect, thank you!", "Great, thanks so much.", "Sounds good, bye."]))
        window = window_minutes if window_minutes is not None else self.rng.choice([5, 10, 15])
        order = {
            "profile_id": str(PROFILE_ID), "profile_name": PROFILE_NAME, "items": items,
            "order_answers": [{"question_id": _stable_uuid("q", "order", ORDER_QUESTIONS[0][0]),
                               "prompt": ORDER_QUESTIONS[0][0], "answer": fulfillment},
                              {"question_id": _stable_uuid("q", "order", ORDER_QUESTIONS[1][0]),
                               "prompt": ORDER_QUESTIONS[1][0], "answer": self.rng.choice(ORDER_QUESTIONS[1][1])}],
            "fulfillment_estimate_value": minutes, "fulfillment_estimate_unit": "minutes",
            "fulfillment_estimate_label": f"{fulfillment} in about {minutes} minutes",
            "fulfillment_varies": self.rng.random() < 0.2,
            "cancellation_allowed": True, "cancellation_window_value": window, "cancellation_window_unit": "minutes",
            "payment_status": None, "external_order_id": None, "payment_collected_at": None,
        }
        checks = self._checks(convo, [
            ("Confirmed the order back to the caller", "pass", [self._quote(confirmation, 6)], None),
            ("Captured the caller's name", "pass", [f"The name is {name}"], None),
            ("Gave a ready time", "pass", [f"ready in about {minutes} minutes"], None),
            ("Offered upsell", self.rng.choice(["fail", "not_applicable"]), [self._quote(thanks, 3)],
             "missed_upsell"),
        ])
        checks[-1]["gap_type"] = "missed_upsell" if checks[-1]["verdict"] == "fail" else None
        self._finish(
            runtime_id, started_at, convo, recording_first=recording_first,
            classification="real_engagement", disposition="completed",
            summary=f"{name} ordered {', '.join(spoken)} for {fulfillment.lower()}.",
            outcome="order", outcome_tags=["order", fulfillment.lower()], quality_checks=checks,
            caller={"name": name, "email": None}, order=order,
        )
        return call

    def _scenario_order(self):
        name, number, _ = self._person()
        return [{"call_id": self._order_call(name=name, number=number)["id"], "scenario": "order"}]

    def _scenario_recording_first(self):
        name, number, _ = self._person()
        call = self._order_call(name=name, number=number, recording_first=True) if self.rng.random() < 0.5 else None
        if call is None:
            call = self._info_call(from_number=number, recording_first=True)
        return [{"call_id": call["id"], "scenario": "recording_first"}]

    def _scenario_caller_cancels_order(self):
        name, number, _ = self._person()
        first = self._order_call(name=name, number=number, ago_minutes=4, window_minutes=15)
        runtime_id, started_at, call = self._start(from_number=number, ago_minutes=1)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        ask = convo.caller(f"Hi, this is {name}, I just ordered a few minutes ago but I need to cancel it, sorry.")
        convo.tool("order_cancel_requested", "Canceled an order", {})
        convo.agent("No problem, I've canceled that order for you. You won't be charged.")
        convo.caller("Thanks, bye.")
        self._finish(
            runtime_id, started_at, convo, classification="real_engagement", disposition="completed",
            summary=f"{name} called back to cancel their order; it was canceled within the window.",
            outcome="order_canceled", outcome_tags=["cancellation"],
            quality_checks=self._checks(convo, [
                ("Confirmed the cancellation", "pass", ["I've canceled that order for you"], None),
                ("Identified the caller", "pass", [self._quote(ask, 4)], None),
            ]),
            caller={"name": name, "email": None},
        )
        return [{"call_id": first["id"], "scenario": "caller_cancels_order"},
                {"call_id": call["id"], "scenario": "caller_cancels_order"}]

    def _scenario_message(self):
        name, number, _ = self._person()
        runtime_id, started_at, call = self._start(from_number=number)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        members = self.knowledge["team_members"]
        member = self.rng.choice(members) if members else None
        who = member["name"] if member else "the manager"
        topic = self.rng.choice([
            "the catering order for Saturday", "a refund for last night's delivery", "a job application",
            "a large office lunch next week", "a lost jacket I left yesterday",
        ])
        ask = convo.caller(f"Could I leave a message for {who}? It's about {topic}.")
        convo.agent(f"Of course. {who.split()[0]} isn't available right now; what would you like me to pass on?")
        detail = convo.caller(f"Please ask them to call me back about {topic}. My name is {name}.")
        convo.agent(f"Got it, {name.split()[0]}. I'll make sure {who.split()[0]} gets your message today.")
        convo.tool("tool", "Left a message")
        self._finish(
            runtime_id, started_at, convo, classification="real_engagement", disposition="completed",
            summary=f"{name} left a message for {who} about {topic}.", outcome="message", outcome_tags=["message"],
            quality_checks=self._checks(convo, [
                ("Captured the message", "pass", [self._quote(detail, 6)], None),
                ("Named the recipient", "pass", [self._quote(ask, 6)], None),
            ]),
            caller={"name": name, "email": None},
            messages=[{"message": f"{name} asks for a call back about {topic}.",
                       "for_team_member_id": member["id"] if member else None,
                       "for_team_member_name": who if member else None,
                       "caller_name": name, "callback_number": number}],
        )
        return [{"call_id": call["id"], "scenario": "message"}]

    def _scenario_callback(self):
        name, number, _ = self._person()
        runtime_id, started_at, call = self._start(from_number=number)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        reason = self.rng.choice(["a question about a catering quote", "a billing question",
                                  "booking the back room for a party", "a complaint about a late delivery"])
        convo.caller(f"I'd like someone to call me back about {reason}.")
        window = self.rng.choice(["asap", "morning", "afternoon", "evening", "custom"])
        custom = "Tomorrow between 2 and 3 pm" if window == "custom" else None
        when = custom.lower() if custom else {"asap": "as soon as possible", "morning": "in the morning",
                                              "afternoon": "in the afternoon", "evening": "in the evening"}[window]
        promise = convo.agent(f"I've asked the team to call you back {when} on this number.")
        members = self.knowledge["team_members"]
        convo.tool("callback_requested", "Requested a callback", {
            "callback_number": number, "requested_window": window, "custom_window": custom,
            "reason": reason.capitalize(),
            "requested_team_member_id": (self.rng.choice(members)["id"] if members and self.rng.random() < 0.4
                                         else None),
        })
        convo.caller("Thank you.")
        self._finish(
            runtime_id, started_at, convo, classification="real_engagement", disposition="completed",
            summary=f"{name} asked for a callback about {reason}.", outcome="callback", outcome_tags=["callback"],
            quality_checks=self._checks(convo, [
                ("Confirmed the callback window", "pass", [self._quote(promise, 8)], None),
                ("Asked for the caller's name", "fail", ["I've asked the team to call you back"], "missing_name"),
            ]),
            caller={"name": None, "email": None},
        )
        return [{"call_id": call["id"], "scenario": "callback"}]

    def _scenario_escalation(self):
        name, number, _ = self._person()
        rules = self.knowledge["escalation_rules"]
        if not rules:
            return self._scenario_callback()
        rule = self.rng.choice(rules)
        runtime_id, started_at, call = self._start(from_number=number)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        complaint = convo.caller(self.rng.choice([
            "I want to speak to a manager right now, my order was completely wrong.",
            "This is the third time my delivery is late. I need a human, please.",
            "I think I'm having an allergic reaction to something in my pizza.",
        ]))
        transfer = convo.agent("I'm sorry about that. I'm connecting you with someone from the team right now.")
        convo.tool("escalation_triggered", "Asked for a manager", {
            "rule_id": rule["id"], "triggered_by": self.rng.choice(["keyword", "llm_classification"]),
            "context": complaint,
        })
        self._finish(
            runtime_id, started_at, convo, classification="real_engagement", disposition="escalated",
            summary=f"{name} was upset and was transferred under rule '{rule['name']}'.", outcome="escalation",
            outcome_tags=["escalation", "complaint"],
            quality_checks=self._checks(convo, [
                ("Acknowledged the caller's frustration", "pass", ["I'm sorry about that"], None),
                ("Escalated promptly", "pass", [self._quote(transfer, 9)], None),
            ]),
            caller={"name": name, "email": None},
        )
        return [{"call_id": call["id"], "scenario": "escalation"}]

    def _scenario_booking(self):
        name, number, email = self._person()
        calendars = self.knowledge["calendars"]
        if not calendars:
            return self._scenario_callback()
        calendar = self.rng.choice(calendars)
        free = self.client.availability(calendar["id"], self.now + timedelta(days=1), self.now + timedelta(days=11))
        if not free:  # no weekly hours, or every slot taken: the caller asks for a callback instead
            return self._scenario_callback()
        slot = self.rng.choice(free)
        runtime_id, started_at, call = self._start(from_number=number)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        party = self.rng.randint(2, 12)
        convo.caller(f"Hi, I'd like to book a table for {party} people.")
        start_at = datetime.fromisoformat(slot["start_at"])
        end_at = datetime.fromisoformat(slot["end_at"])
        local = start_at.astimezone(ZoneInfo(calendar["timezone"]))
        day, hour = local.date(), f"{local:%H:%M}"
        convo.agent(f"I can do {day:%A %B} {day.day} at {hour}. Could I get your name and email?")
        given = convo.caller(f"It's {name}, and my email is {email}.")
        confirm = convo.agent(f"You're booked for {party} on {day:%A} at {hour}. A confirmation is on its way.")
        convo.tool("appointment_booked", "Booked a table", {
            "calendar_id": calendar["id"], "start_at": _iso(start_at), "end_at": _iso(end_at),
            "timezone": calendar["timezone"], "contact_name": name, "contact_email": email, "contact_phone": number,
        })
        self._finish(
            runtime_id, started_at, convo, classification="real_engagement", disposition="completed",
            summary=f"{name} booked a table for {party} on {day:%A %B} {day.day}.", outcome="booking",
            outcome_tags=["booking"],
            quality_checks=self._checks(convo, [
                ("Confirmed date and time", "pass", [self._quote(confirm, 6)], None),
                ("Captured contact details", "pass", [self._quote(given, 4)], None),
            ]),
            caller={"name": name, "email": email},
        )
        return [{"call_id": call["id"], "scenario": "booking"}]

    def _info_call(self, *, from_number: str | None, recording_first=False) -> dict:
        runtime_id, started_at, call = self._start(from_number=from_number)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        facts = self.knowledge["facts"]
        fact = self.rng.choice(facts) if facts else {"label": "Opening hours",
                                                     "content": "We're open every day from 11 am to 10 pm."}
        question = convo.caller(f"Hi, quick question about {fact['label'].lower()}.")
        answer = convo.agent(fact["content"])
        convo.tool("tool", f"Asked about {fact['label'].lower()}")
        unanswered = []
        if self.rng.random() < 0.35:  # something the knowledge base does not say: the agent admits it
            unanswered.append(self.rng.choice(UNANSWERABLE))
            convo.caller(f"And one more thing: {unanswered[0][0].lower()}{unanswered[0][1:]}")
            convo.agent("I'm sorry, I don't have that information. I'll pass your question on to the team.")
        convo.caller(self.rng.choice(["Great, that's all I needed.", "Perfect, thanks!", "Okay, thank you."]))
        self._finish(
            runtime_id, started_at, convo, recording_first=recording_first,
            classification="real_engagement", disposition="completed",
            summary=f"Caller asked about {fact['label'].lower()} and got the answer from the knowledge base.",
            outcome="info", outcome_tags=["question"],
            knowledge_version=self.knowledge.get("version"),
            facts_used=[fact["id"]] if "id" in fact else [], unanswered_questions=unanswered,
            quality_checks=self._checks(convo, [
                ("Answered from the knowledge base", "pass", [self._quote(answer, 6)], None),
                ("Understood the question", "pass", [self._quote(question, 4)], None),
                ("Offered further help", "fail", [self._quote(answer, 3)], "no_follow_up"),
            ]),
            caller={"name": None, "email": None},
        )
        return call

    def _scenario_info(self):
        _, number, _ = self._person()
        return [{"call_id": self._info_call(from_number=number)["id"], "scenario": "info"}]

    def _scenario_withheld_number(self):
        return [{"call_id": self._info_call(from_number=None)["id"], "scenario": "withheld_number"}]

    def _scenario_robocall(self):
        _, number, _ = self._person()
        runtime_id, started_at, call = self._start(from_number=number)
        convo = Conversation(self.rng)
        self._greet(convo, None)
        convo.caller(self.rng.choice([
            "This is an important message about your car's extended warranty. Press one to speak to an agent.",
            "Congratulations! You have been selected for a free cruise. Press nine now.",
            "Hello, this is the business listings department calling about your Google profile.",
        ]))
        classification = self.rng.choice(["robocall", "automated_dialer"])
        self._finish(
            runtime_id, started_at, convo, classification=classification, disposition="completed",
            summary="Automated sales call; no caller engaged.", outcome="spam", outcome_tags=["spam"],
            quality_checks=[], score=None,
        )
        return [{"call_id": call["id"], "scenario": "robocall"}]

    def _scenario_wrong_number(self):
        _, number, _ = self._person()
        runtime_id, started_at, call = self._start(from_number=number)
        convo = Conversation(self.rng)
        self._greet(convo, self._location())
        convo.caller(self.rng.choice(["Oh sorry, wrong number.", "Is this the dentist? Oh, sorry.", "Uh, never mind."]))
        self._finish(
            runtime_id, started_at, convo, classification="wrong_number_hangup", disposition="completed",
            summary="Caller dialed the wrong number and hung up.", outcome="wrong_number", outcome_tags=[],
        )
        return [{"call_id": call["id"], "scenario": "wrong_number"}]


def ensure_demo_configuration(org) -> None:
    """An escalation rule and a calendar, so every scenario can play. Created once, through the services."""
    if not EscalationRule.objects.for_org(org).exists():
        member = TeamMember.objects.for_org(org).exclude(phone_number=None).order_by("created_at").first()
        if member is not None:
            escalation_rule_create(org=org, name="Angry or urgent caller", destination_type="team_member",
                                   destination_team_member=member, keywords=["manager", "complaint", "allergic"])
        else:
            escalation_rule_create(org=org, name="Angry or urgent caller", destination_type="phone",
                                   destination_phone="+14155550100", keywords=["manager", "complaint", "allergic"])
    if not Calendar.objects.for_org(org).exists():
        location = Location.objects.for_org(org).order_by("created_at").first()
        calendar_create(org=org, name="Table reservations", location=location,
                        timezone_name=location.timezone if location else "UTC", slot_minutes=90,
                        weekly_hours=[{"day": day, "start": "11:30", "end": "22:00"} for day in DAYS])
