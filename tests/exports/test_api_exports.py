"""/v1/exports/<kind>.csv: every kind is its list (the same rows in the same order, the same fields as columns, the
same filters), spreadsheet-safe, the key's organization's only, and bad input answered like the lists'."""

from datetime import timedelta

import pytest
from django.http import StreamingHttpResponse
from rest_framework.test import APIClient

from calls.models import CallbackRequest
from knowledge.services import call_field_create
from tests.factories import make_key
from tests.support.exports import HYPERLINK, KINDS, as_cells, exported, listed
from tests.support.runtime import T0, Runtime, iso

pytestmark = pytest.mark.django_db


def validation(field_errors):
    return {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


@pytest.mark.parametrize("kind", KINDS)
def test_each_export_is_its_list_row_for_row_and_column_for_column(read_api, rows, kind):
    items = listed(read_api, kind)
    assert items, "the fixture makes rows of every kind"
    header, *lines = exported(read_api, kind)
    assert header == list(items[0])
    assert lines == [as_cells(item) for item in items]


def test_handled_by_and_nested_values_are_written_as_json(api, read_api, rows, write_key):
    callback = CallbackRequest.objects.get(call=rows["ordered"])
    assert api.patch(f"/v1/callbacks/{callback.pk}", {"handled": True}, format="json").status_code == 200
    header, line = exported(read_api, "callbacks")
    record = dict(zip(header, line, strict=True))
    key = write_key[0]
    assert record["handled"] == "true"
    assert record["handled_by"] == f'{{"type":"api_key","id":"{key.pk}","name":"{key.name}"}}'
    assert [as_cells(item) for item in listed(read_api, "callbacks")] == [line]
    header, *calls = exported(read_api, "calls")
    assert dict(zip(header, calls[1], strict=True))["outcome_tags"] == '["message","+1"]'


def test_a_formula_is_written_as_text(read_api, rows):
    contacts = exported(read_api, "contacts")
    assert any(row[2] == "'" + HYPERLINK for row in contacts[1:])
    summaries = [dict(zip(calls_header, row, strict=True))["summary"]
                 for calls_header, *calls in [exported(read_api, "calls")] for row in calls]
    assert "'" + HYPERLINK in summaries
    [message_row] = [r for r in exported(read_api, "messages")[1:] if "owe" in "".join(r)]
    assert "'-2+3 is what I owe" in message_row and "'@Sam" in message_row
    assert all(not value.startswith(("=", "+", "-", "@")) for row in contacts for value in row)


@pytest.mark.parametrize(("kind", "params", "count"), [
    ("calls", {"location_id": "annex"}, 1),
    ("calls", {"status": "in_progress"}, 1),
    ("calls", {"outcome": "order", "has_recording": "true"}, 1),
    ("calls", {"q": "pepperoni"}, 2),
    ("contacts", {"search": "555 0999"}, 1),
    ("bookings", {"status": "canceled"}, 0),
    ("orders", {"status": "new", "location_id": "main"}, 1),
    ("orders", {"location_id": "annex"}, 0),
    ("callbacks", {"handled": "true", "since": "2020-01-01T00:00:00Z"}, 0),
    ("messages", {"location_id": "annex"}, 1),
])
def test_filters_select_what_the_list_selects(read_api, rows, kind, params, count):
    params = {name: str(rows[value].pk) if value in ("main", "annex") else value for name, value in params.items()}
    items = listed(read_api, kind, params)
    header, *lines = exported(read_api, kind, params)
    assert len(lines) == count
    assert lines == [as_cells(item) for item in items]


def test_another_orgs_rows_are_absent(read_api, other_api, rows):
    for kind in KINDS:
        ours = "".join("".join(line) for line in exported(read_api, kind))
        assert "Rival" not in ours and "+14155550666" not in ours
        header, *theirs = exported(other_api, kind)
        assert len(theirs) == len(listed(other_api, kind))
    assert len(exported(other_api, "calls")) == 2


def test_the_download_streams(read_api, rows):
    response = read_api.get("/v1/exports/calls.csv")
    assert isinstance(response, StreamingHttpResponse)
    assert response["RateLimit-Limit"]  # the per-key rate limit applies, as to every /v1 read
    response.close()  # as a WSGI server does: the export's transaction ends with it


@pytest.mark.parametrize(("query", "field_errors"), [
    ({"limit": "5"}, {"limit": ["Unknown query parameter."]}),
    ({"cursor": "x"}, {"cursor": ["Unknown query parameter."]}),
    ({"colour": "red"}, {"colour": ["Unknown query parameter."]}),
    ({"since": "yesterday"}, {"since": [
        "Datetime has wrong format. Use one of these formats instead: "
        "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."]}),
    ({"status": "ringing"}, {"status": ['"ringing" is not a valid choice.']}),
])
def test_bad_filters_are_400_like_the_lists(read_api, query, field_errors):
    response = read_api.get("/v1/exports/calls.csv", query)
    assert (response.status_code, response.json()) == (400, validation(field_errors))
    if "limit" not in query and "cursor" not in query:
        assert read_api.get("/v1/calls", query).json() == validation(field_errors)


@pytest.mark.parametrize("kind", KINDS)
def test_another_format_is_400_on_format(read_api, kind):
    response = read_api.get(f"/v1/exports/{kind}.xlsx")
    assert (response.status_code, response.json()) == (400, validation(
        {"format": ["Unknown format 'xlsx': exports are csv."]}))


@pytest.mark.parametrize("path", ["/v1/exports/users.csv", "/v1/exports/calls", "/v1/exports/", "/v1/exports/.csv"])
def test_an_unknown_kind_is_404(read_api, path):
    response = read_api.get(path)
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})


def test_a_key_is_required(anon_api):
    for path in ("/v1/exports/calls.csv", "/v1/exports/calls.xlsx", "/v1/exports/users.csv"):
        response = anon_api.get(path)
        assert (response.status_code, response.json()) == (401, {"error": "unauthorized"})


def test_an_export_takes_no_write(api):
    response = api.post("/v1/exports/contacts.csv", {"phone_number": "+14155550100"}, format="json")
    assert response.status_code == 405
    assert not api.get("/v1/contacts").json()["data"]


def test_the_calls_export_has_a_column_per_call_field(read_api, org, rows):
    """After the list's fields, `fields.<name>` for each of the organization's call fields by name, with the value
    as stored (typed: numbers and booleans as such, text made safe), empty for a call without it."""
    call_field_create(org=org, name="party_size", label="Party size", type="number")
    call_field_create(org=org, name="allergy", label="Allergy", type="string")
    call_field_create(org=org, name="wants_delivery", label="Delivery", type="boolean")
    runtime = Runtime(org)
    call_id, _ = runtime.start(started_at=T0 + timedelta(hours=3))
    done = runtime.complete(call_id, outcome="question", ended_at=iso(T0 + timedelta(hours=3, minutes=1)), fields={
        "party_size": {"value": 4}, "allergy": {"value": "=1+1"}, "wants_delivery": {"value": False}})
    assert done.status_code in (200, 201), done.content
    header, *lines = exported(read_api, "calls")
    items = listed(read_api, "calls")
    assert header == [*items[0], "fields.allergy", "fields.party_size", "fields.wants_delivery"]
    assert lines[0][-3:] == ["'=1+1", "4", "false"]
    assert all(line[-3:] == ["", "", ""] for line in lines[1:])
    assert [line[:-3] for line in lines] == [as_cells(item) for item in items]
    assert "fields.party_size" not in exported(read_api, "contacts")[0]


@pytest.mark.parametrize("kind", KINDS)
def test_a_key_limited_to_a_location_exports_what_its_list_shows(org, admin, rows, kind):
    """The export goes through the list's own selection, so a key's location scope narrows both alike."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, admin=admin, location_ids=[rows['annex'].pk])[1]}")
    items = listed(client, kind)
    header, *lines = exported(client, kind)
    assert lines == [as_cells(item) for item in items]
    if kind in ("calls", "messages"):
        assert [line[header.index("location_id")] for line in lines] == [str(rows["annex"].pk)]
    if kind in ("orders", "bookings", "callbacks", "escalations"):
        assert lines == []  # all at the main location


def test_call_field_filters_select_what_the_list_selects(read_api, org, rows):
    call_field_create(org=org, name="party_size", label="Party size", type="number")
    runtime = Runtime(org)
    for hour, size in ((3, 4), (4, 6)):
        call_id, _ = runtime.start(started_at=T0 + timedelta(hours=hour))
        assert runtime.complete(call_id, outcome="question", ended_at=iso(T0 + timedelta(hours=hour, minutes=1)),
                                fields={"party_size": {"value": size}}).status_code in (200, 201)
    header, *lines = exported(read_api, "calls", {"fields.party_size": "4"})
    assert [line[header.index("fields.party_size")] for line in lines] == ["4"]
    assert [line[:-1] for line in lines] == [as_cells(item) for item in listed(read_api, "calls",
                                                                              {"fields.party_size": "4"})]
    bad = read_api.get("/v1/exports/calls.csv", {"fields.colour": "red"})
    assert (bad.status_code, bad.json()) == (400, read_api.get("/v1/calls", {"fields.colour": "red"}).json())
