"""Dates outside 2000-01-01..2100-12-31 in a filter or range are a 400 on that parameter (issue 35 item 11): near
the calendar's ends the arithmetic around them overflowed (`until=0001-01-05` took 29 days off it for the default
`since`, `9999-12-31` added the day after), a 500. Every date and date-time query parameter the OpenAPI document
lists is checked, so a new one is in this test the day it is added; the dashboard's date filters, its exports and
the runtime's availability range too."""

import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from knowledge.services import calendar_create
from tests.factories import make_key
from tests.support.runtime import Runtime
from tests.support.webhooks import make_subscription

pytestmark = pytest.mark.django_db

MESSAGE = "Enter a date from 2000-01-01 to 2100-12-31."
SCHEMA = json.loads((Path(__file__).parent / "openapi.snapshot.json").read_text())
OUTSIDE = {"date": ["0001-01-05", "9999-12-31", "1999-12-31", "2101-01-01"],
           "date-time": ["0001-01-05T00:00:00Z", "9999-12-31T23:59:59Z", "1999-12-31T23:59:59Z",
                         "2101-01-01T00:00:00Z"]}
INSIDE = {"date": ["2000-01-01", "2100-12-31"], "date-time": ["2000-01-01T00:00:00Z", "2100-12-31T23:59:59Z"]}


def _date_params():
    for path, operations in SCHEMA["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            kind = parameter.get("schema", {}).get("format")
            if parameter["in"] == "query" and kind in OUTSIDE:
                yield pytest.param(path, parameter["name"], kind, id=f"{path}?{parameter['name']}")


DATE_PARAMS = list(_date_params())


def test_the_schema_lists_the_date_parameters_this_test_knows():
    assert len(DATE_PARAMS) >= 30  # the analytics, every list's since/until and the exports'


@pytest.fixture
def client(org):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, scope='read_write_audit')[1]}")
    return client


def _answer(response) -> tuple:
    return response.status_code, response.json()


# A path's `{id}` -> the organization's row it names (a path with another one fails here until it is added).
PATH_ROWS = {"/v1/webhook-subscriptions/{id}/": make_subscription}


def _concrete(path: str, org) -> str:
    if "{" not in path:
        return path
    [make] = [make for prefix, make in PATH_ROWS.items() if path.startswith(prefix)]
    return path.replace("{id}", str(make(org).pk))


@pytest.mark.parametrize(("path", "name", "kind"), DATE_PARAMS)
def test_a_date_outside_the_supported_days_is_a_400_on_it(org, client, path, name, kind):
    path = _concrete(path, org)
    for value in OUTSIDE[kind]:
        response = client.get(path, {name: value})
        assert _answer(response) == (400, {"error": "Validation failed", "details": {
            "formErrors": [], "fieldErrors": {name: [MESSAGE]}}}), value
    for value in INSIDE[kind]:
        # The analytics range is at most 400 days: its first and last supported days, each as a one-day range.
        query = {"since": value, "until": value} if "analytics" in path else {name: value}
        response = client.get(path, query)
        assert response.status_code == 200, (value, response.content[:300])
        if response.streaming:
            b"".join(response.streaming_content)


def test_the_analytics_range_ends_at_the_supported_days(client):
    response = client.get("/v1/analytics/calls", {"since": "2100-12-02", "until": "2100-12-31"})
    assert response.status_code == 200
    assert (response.json()["data"]["since"], response.json()["data"]["until"]) == ("2100-12-02", "2100-12-31")


def test_the_runtimes_availability_range_too(org):
    calendar = calendar_create(org=org, name="Tables", timezone_name="UTC", slot_minutes=60,
                               weekly_hours=[{"day": "mon", "start": "09:00", "end": "12:00"}])
    runtime = Runtime(org)
    url = f"{runtime.prefix}/calendars/{calendar.pk}/availability"
    for bounds, field in [({"from": "0001-01-05T00:00:00Z", "to": "0001-01-06T00:00:00Z"}, "from"),
                          ({"from": "9999-12-30T00:00:00Z", "to": "9999-12-31T23:59:59Z"}, "from")]:
        response = runtime.client.get(url, bounds)
        assert response.status_code == 400, response.content
        assert response.json()["details"]["fieldErrors"][field] == [MESSAGE]


def test_a_replays_range_too(org, client):
    sub = make_subscription(org)
    for body, field in [({"since": "9999-12-31T00:00:00Z"}, "since"),
                        ({"since": "2026-01-01T00:00:00Z", "until": "9999-12-31T23:59:59Z"}, "until")]:
        response = client.post(f"/v1/webhook-subscriptions/{sub.pk}/replay", body, format="json")
        assert response.status_code == 400, response.content
        assert response.json()["details"]["fieldErrors"][field] == [MESSAGE]


DASHBOARD_LISTS = ["/calls/", "/bookings/", "/events/", "/settings/audit-log/", "/analytics/"]
DASHBOARD_EXPORTS = ["/calls/export.csv", "/bookings/export.csv", "/settings/audit-log/export.csv"]


@pytest.mark.parametrize("path", DASHBOARD_LISTS)
@pytest.mark.parametrize("value", ["0001-01-05", "9999-12-31", "1999-12-31"])
def test_the_dashboards_date_filters_say_so_on_the_field(admin_client, path, value):
    for name in ("since", "until"):
        response = admin_client.get(path, {name: value})
        assert response.status_code == 200
        assert response.context["form"].errors[name] == [MESSAGE]


@pytest.mark.parametrize("path", DASHBOARD_EXPORTS)
def test_the_dashboards_exports_refuse_them(admin_client, path):
    for value in ("0001-01-05", "9999-12-31"):
        assert admin_client.get(path, {"until": value}).status_code == 400
        assert admin_client.get(path, {"since": value}).status_code == 400
