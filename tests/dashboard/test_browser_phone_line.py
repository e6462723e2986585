"""A real browser through what an org needs to run its phone line itself (issue 14): an escalation rule made in
the dashboard is on the runtime's next knowledge read; a calendar with weekly hours, a booking the runtime made
into it canceled from the Bookings page; an unanswered question followed to a prefilled fact form."""

from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.support.browser import BROWSER_MARKS, log_in, shot

pytestmark = BROWSER_MARKS


def nav(page, name):
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)


def runtime(live_server, org, method, path, **kwargs):
    from django.conf import settings

    headers = {"Authorization": f"Bearer {settings.AGENT_RUNTIME_TOKEN}"}
    return requests.request(method, f"{live_server.url}/internal/agent/v1/orgs/{org.pk}{path}", headers=headers,
                            timeout=10, **kwargs)


@pytest.fixture
def world():
    from knowledge.services import team_member_create
    from tests.factories import MembershipFactory, OrganizationFactory

    org = OrganizationFactory(name="Trattoria Tre")
    MembershipFactory(organization=org, role="admin", user__email="owner@tre.example")
    team_member_create(org=org, name="Maria Lopez", role="Manager", phone_number="+14155550111")
    return {"org": org}


@pytest.mark.django_db(transaction=True)
def test_rules_calendars_bookings_and_unanswered_questions_in_a_real_browser(live_server, world, page):
    from playwright.sync_api import expect

    org = world["org"]
    log_in(page, live_server, "owner@tre.example")

    # An escalation rule, served by the runtime's next knowledge read.
    nav(page, "Escalation rules").click()
    page.get_by_test_id("create-escalation-rule").click()
    page.get_by_label("Name").fill("Allergy questions")
    page.get_by_label("Keywords").fill("allergic, epipen")
    page.get_by_label("Team member").select_option(label="Maria Lopez")
    shot(page, "line-01-rule-form")
    page.get_by_test_id("save-rule").click()
    expect(page.get_by_text("Escalation rule “Allergy questions” saved.")).to_be_visible()
    rules = runtime(live_server, org, "GET", "/knowledge").json()["data"]["escalation_rules"]
    assert [(r["name"], r["keywords"]) for r in rules] == [("Allergy questions", ["allergic", "epipen"])]
    page.get_by_test_id("toggle-rule").click()
    expect(page.get_by_test_id("rule-status")).to_have_text("Off")
    assert runtime(live_server, org, "GET", "/knowledge").json()["data"]["escalation_rules"] == []
    shot(page, "line-02-rules")

    # A calendar with its weekly hours.
    nav(page, "Calendars").click()
    page.get_by_test_id("create-calendar").click()
    page.get_by_label("Name").fill("Tables")
    page.get_by_label("Time zone").fill("UTC")
    page.get_by_label("Slot length (minutes)").fill("60")
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"):
        page.get_by_label(day, exact=True).fill("10:00-22:00")
    shot(page, "line-03-calendar-form")
    page.get_by_test_id("save-calendar").click()
    expect(page.get_by_text("Calendar “Tables” saved.")).to_be_visible()
    calendar = runtime(live_server, org, "GET", "/knowledge").json()["data"]["calendars"][0]
    assert len(calendar["weekly_hours"]) == 7

    # The runtime books a free slot on a call; the Bookings page cancels it.
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(days=2)
    slots = runtime(live_server, org, "GET", f"/calendars/{calendar['id']}/availability",
                    params={"from": start.isoformat(), "to": (start + timedelta(days=1)).isoformat()}).json()
    slot = slots["data"]["slots"][0]
    call = runtime(live_server, org, "POST", "/calls", json={"call_id": "rt-browser-1", "started_at": start.isoformat(),
                                                            "from_number": "+14155550123"})
    assert call.status_code == 201
    booked = runtime(live_server, org, "POST", "/calls/rt-browser-1/events", json={
        "event_id": "e1", "type": "appointment_booked", "label": "Booked a table",
        "data": {"calendar_id": calendar["id"], "start_at": slot["start_at"], "end_at": slot["end_at"],
                 "contact_name": "Ada Lovelace"}})
    assert booked.status_code == 201, booked.text
    runtime(live_server, org, "POST", "/calls/rt-browser-1/complete", json={
        "ended_at": (start + timedelta(minutes=3)).isoformat(), "classification": "real_engagement",
        "summary": "Booked a table.", "outcome": "info", "unanswered_questions": ["Do you sell gift cards?"]})
    nav(page, "Bookings").click()
    expect(page.get_by_test_id("booking-row")).to_contain_text("Ada Lovelace")
    shot(page, "line-04-bookings")
    page.get_by_test_id("cancel-booking").click()
    expect(page.get_by_test_id("booking-status")).to_have_text("Canceled")
    free = runtime(live_server, org, "GET", f"/calendars/{calendar['id']}/availability",
                   params={"from": slot["start_at"], "to": slot["end_at"]}).json()["data"]["slots"]
    assert free == [slot]  # the slot is free again

    # An unanswered question, followed to a fact form with the question as its label.
    nav(page, "Knowledge base").click()
    page.get_by_test_id("unanswered-link").click()
    expect(page.get_by_test_id("unanswered-row")).to_contain_text("Do you sell gift cards?")
    shot(page, "line-05-unanswered")
    page.get_by_test_id("add-fact-from-question").click()
    expect(page.get_by_label("Label")).to_have_value("Do you sell gift cards?")
    page.get_by_label("Content").fill("Yes: gift cards from $25 at the counter.")
    page.get_by_role("button", name="Save fact").click()
    expect(page.get_by_text("Fact “Do you sell gift cards?” saved.")).to_be_visible()
