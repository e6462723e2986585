"""Calls of every kind generated through the runtime, with the test's own record of each, for the analytics tests
to count themselves and compare with what the product counts."""

import random
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from calls.models import Booking, Call
from knowledge.services import location_create
from orgs.models import Organization
from tests.support.runtime import Runtime, completion, iso

# Calls from 2026-09-26 to 2026-11-06 (UTC): Adelaide starts DST on 4 October (+09:30 -> +10:30), Los Angeles ends
# it on 1 November (-07:00 -> -08:00).
FIRST = datetime(2026, 9, 26, tzinfo=UTC)
SPAN = timedelta(days=41)
OUTCOMES = ["order", "question", "booking", ""]



def _local_midnights(zone: str):
    """Instants a minute either side of each local midnight near the DST changes: where a day bucket can go wrong."""
    tz = ZoneInfo(zone)
    for day in (date(2026, 10, 3), date(2026, 10, 4), date(2026, 10, 5), date(2026, 10, 31), date(2026, 11, 1),
                date(2026, 11, 2)):
        midnight = datetime(day.year, day.month, day.day, tzinfo=tz).astimezone(UTC)
        yield midnight - timedelta(minutes=1)
        yield midnight


def generate_calls(org, locations, count, seed):
    """Calls of every kind through the runtime (and bookings on some), returned as the test's own record of them."""
    rng = random.Random(seed)
    runtime = Runtime(org)
    starts = [FIRST + timedelta(seconds=rng.randrange(int(SPAN.total_seconds()))) for _ in range(count)]
    starts += list(_local_midnights("America/Los_Angeles")) + list(_local_midnights("Australia/Adelaide"))
    made = []
    for started in starts:
        location = rng.choice(locations)
        call_id, response = runtime.start(started_at=started, location_id=location)
        assert response.status_code == 201, response.content
        spec = {"started_at": started, "location_id": location, "outcome": "", "classification": None,
                "disposition": None, "duration": None, "score": None, "unanswered": 0, "bookings": 0, "orders": 0,
                "fields": {}}
        if rng.random() < 0.85:  # the rest stay in progress
            outcome = rng.choice(OUTCOMES)
            classification = rng.choice(["real_engagement", "real_engagement", "robocall", "wrong_number_hangup"])
            duration = rng.randrange(5, 900)
            score = rng.randrange(0, 101) if rng.random() < 0.8 else None
            unanswered = [f"Question {n}?" for n in range(rng.randrange(0, 3))]
            disposition = rng.choice(["completed", "transferred", "escalated"])
            body = completion(
                ended_at=iso(started + timedelta(seconds=duration)), classification=classification,
                disposition=disposition, outcome=outcome, quality_checks=[], score=score,
                unanswered_questions=unanswered, **({} if outcome == "order" else {"order": None}),
            )
            response = runtime.complete(call_id, **body)
            assert response.status_code == 200, response.content
            spec.update(outcome=outcome, classification=classification, disposition=disposition, duration=duration,
                        score=score if classification == "real_engagement" else None, unanswered=len(unanswered),
                        orders=int(outcome == "order"))
            # Number call fields as the completion stores them (calls.call_fields); a string one is never summed.
            fields = {"party_size": {"label": "Party size", "type": "number", "value": rng.randrange(1, 12)},
                      "note": {"label": "Note", "type": "string", "value": "12"}}
            if rng.random() < 0.5:
                fields["budget"] = {"label": "Budget", "type": "number", "value": rng.randrange(10, 500) + 0.25}
            if rng.random() < 0.7:
                Call.objects.filter(organization=org, runtime_call_id=call_id).update(fields=fields)
                spec["fields"] = {name: f["value"] for name, f in fields.items() if f["type"] == "number"}
        if rng.random() < 0.15:
            call = runtime.call(call_id)
            for n in range(rng.randrange(1, 3)):
                Booking.objects.create(organization=org, call=call, start_at=started + timedelta(days=1, hours=n),
                                       end_at=started + timedelta(days=1, hours=n + 1), timezone="UTC")
                spec["bookings"] += 1
        made.append(spec)
    return made


def analytics_world(org, other_org) -> list[dict]:
    """70 calls of `org` over its two locations and none, in two far-apart zones, and 10 of `other_org` on the same
    days: what the analytics tests count for themselves."""
    la = location_create(org=org, name="LA", address="1 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    adelaide = location_create(org=org, name="Adelaide", address="2 King William St", timezone="Australia/Adelaide",
                               phone_number="+61881234567")
    Organization.objects.filter(pk=org.pk).update(time_zone="America/Los_Angeles")
    made = generate_calls(org, [la.pk, adelaide.pk, None], 70, seed=29)
    generate_calls(other_org, [None], 10, seed=30)  # same days, never counted for org
    return made
