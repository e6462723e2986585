"""List items are built by PostgreSQL (core/sqljson.py); these pin each one, field for field, to the Python
shape that documents it (the call payload, the serializers), over rows with and without their optional parts."""

from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings as django_settings

from calls.models import Call
from calls.payloads import call_data
from calls.selectors import call_list
from contacts.api.serializers import ContactSerializer
from contacts.models import Contact
from knowledge.api.serializers import FactSerializer, LocationSerializer, TeamMemberSerializer
from knowledge.models import Fact, TeamMember
from orgs.models import Location
from tests.support.runtime import Runtime

# Microseconds that a rounding formatter would carry into the next millisecond (or second): the API truncates.
AWKWARD = datetime(2026, 3, 8, 6, 59, 59, 999_999, tzinfo=UTC)


def _listed(api, path):
    response = api.get(path, {"limit": 100})
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return response.json()["data"]


def test_call_items_are_the_call_payload(api, org, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    runtime = Runtime(org, token=django_settings.AGENT_RUNTIME_TOKEN)
    ordered, _ = runtime.start(started_at=AWKWARD)
    assert runtime.complete(ordered).status_code in (200, 201)
    assert runtime.upload(ordered).status_code in (200, 201)
    runtime.start(started_at=AWKWARD - timedelta(minutes=1))  # in progress: every end field null
    odd, _ = runtime.start(started_at=AWKWARD - timedelta(minutes=2))
    runtime.complete(odd, outcome="info", outcome_tags=[], summary='Tab\there, "quotes", \\, é, \u2028 and \x01.')

    expected = [call_data(call) for call in call_list(org=org).order_by("-started_at", "-id")]
    assert len(expected) == 3 and expected[0]["has_recording"] and expected[0]["order_status"] == "new"
    assert _listed(api, "/v1/calls") == expected
    assert expected[0]["started_at"] == "2026-03-08T06:59:59.999Z"


@pytest.mark.parametrize(("path", "model", "serializer", "make"), [
    ("/v1/contacts", Contact, ContactSerializer, lambda org, i: Contact.objects.create(
        organization=org, phone_number=f"+1415555{i:04d}", phone_digits=f"1415555{i:04d}", source="api",
        name=None if i % 2 else f"Name {i} \u00e9", email=None if i % 2 else f"n{i}@example.com")),
    ("/v1/facts", Fact, FactSerializer, lambda org, i: Fact.objects.create(
        organization=org, label=f"Fact {i}", content="Line one\nline two",
        location=None if i % 2 else Location.objects.create(organization=org, name=f"Place {i}", timezone="UTC"))),
    ("/v1/locations", Location, LocationSerializer, lambda org, i: Location.objects.create(
        organization=org, name=f"Spot {i}", timezone="Europe/Paris", address="" if i % 2 else "1 Main St")),
    ("/v1/team-members", TeamMember, TeamMemberSerializer, lambda org, i: TeamMember.objects.create(
        organization=org, name=f"Member {i}", role=None if i % 2 else "Chef")),
])
def test_model_items_are_their_serializer(api, org, admin, path, model, serializer, make):
    for i in range(4):
        row = make(org, i)
        model.objects.filter(pk=row.pk).update(created_at=AWKWARD - timedelta(seconds=i), updated_at=AWKWARD)
    if model is TeamMember:
        TeamMember.objects.create(organization=org, name="Platform user", user=admin)
    rows = model.objects.for_org(org).order_by("-created_at", "-id")
    assert _listed(api, path) == serializer(rows, many=True).data
    assert any(item.get("updated_at") == "2026-03-08T06:59:59.999Z" for item in serializer(rows, many=True).data)


def test_a_page_boundary_between_equal_timestamps_neither_skips_nor_repeats(api, org):
    contacts = [Contact.objects.create(organization=org, phone_number=f"+1415666{i:04d}",
                                       phone_digits=f"1415666{i:04d}", source="api") for i in range(5)]
    Contact.objects.filter(pk__in=[c.pk for c in contacts]).update(created_at=AWKWARD)
    seen, cursor = [], None
    while True:
        body = api.get("/v1/contacts", {"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += [item["id"] for item in body["data"]]
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert sorted(seen) == sorted(str(c.pk) for c in contacts) and len(seen) == 5
    assert Call.objects.count() == 0


def test_a_cursor_keeps_the_microseconds_its_page_ends_on(api, org):
    """Items show milliseconds; the cursor must not: five rows one microsecond apart page without a gap."""
    contacts = [Contact.objects.create(organization=org, phone_number=f"+1415777{i:04d}",
                                       phone_digits=f"1415777{i:04d}", source="api") for i in range(5)]
    for i, contact in enumerate(contacts):
        Contact.objects.filter(pk=contact.pk).update(created_at=AWKWARD - timedelta(microseconds=i))
    seen, cursor = [], None
    while True:
        body = api.get("/v1/contacts", {"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += [item["id"] for item in body["data"]]
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert seen == [str(c.pk) for c in contacts]
