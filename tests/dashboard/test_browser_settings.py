"""A real browser through the knowledge base, contacts, locations, team, API keys and webhooks pages: a fact made
in the dashboard is on the agent runtime's very next knowledge read; a key's and a webhook's secret are each
shown once. Headless Debian Chromium via Playwright; screenshots go to test-artifacts/screenshots/."""

import socket
from datetime import timedelta

import pytest
import requests

from tests.support.browser import BROWSER_MARKS, log_in, shot

pytestmark = BROWSER_MARKS








@pytest.fixture(autouse=True)
def _offline_webhooks(monkeypatch):
    """A fake DNS at the one DNS edge, and no broker: enqueued deliveries are left to nobody (no worker here)."""

    def resolve(host, port):
        if host == "hooks.example.com":
            return ["93.184.216.34"]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr("webhooks.ssrf.resolve_host", resolve)
    monkeypatch.setattr("webhooks.tasks.publisher.publish", lambda ids, **kwargs: 0)


def nav(page, name):
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)


def knowledge(live_server, org, etag=None):
    from django.conf import settings

    headers = {"Authorization": f"Bearer {settings.AGENT_RUNTIME_TOKEN}"}
    if etag:
        headers["If-None-Match"] = etag
    return requests.get(f"{live_server.url}/internal/agent/v1/orgs/{org.pk}/knowledge", headers=headers, timeout=10)


@pytest.fixture
def world():
    """An org with an admin, a location, a contact with a call, team members (one a platform user) and a webhook
    subscription whose deliveries are failing (so the log has attempts to show)."""
    from django.utils import timezone

    from calls.models import Call
    from contacts.services import contact_create
    from knowledge.services import fact_create, location_create, team_member_create
    from orgs.models import Organization
    from tests.factories import MembershipFactory, OrganizationFactory
    from webhooks.models import Delivery, DeliveryAttempt, Subscription
    from webhooks.services import emit, subscription_create

    org = OrganizationFactory(name="Trattoria Due")
    admin = MembershipFactory(organization=org, role="admin", user__email="owner@trattoria.example").user
    Organization.objects.filter(pk=org.pk).update(meetings_enabled=True)
    downtown = location_create(org=org, name="Downtown", address="1 Main St\nSpringfield",
                               timezone="America/New_York", phone_number="+14155550100")
    location_create(org=org, name="Harbor", address="9 Pier Rd", timezone="America/New_York",
                    phone_number="+14155550101")
    fact_create(org=org, label="Opening hours", content="Every day 11:00-22:00.")
    fact_create(org=org, label="Parking", content="Free parking behind the building.", location=downtown)
    team_member_create(org=org, name="Owner", role="Owner", email=admin.email, user=admin)
    team_member_create(org=org, name="Maria Lopez", role="Manager", phone_number="+14155550111")
    ada = contact_create(org=org, phone_number="+14155550123", name="Ada Lovelace", email="ada@example.com",
                         notes="Allergic to nuts.", source="api")
    contact_create(org=org, phone_number="+14155550124", name="Grace Hopper", source="inbound_call")
    now = timezone.now()
    Call.objects.create(organization=org, runtime_call_id="rt-1", started_at=now - timedelta(days=1), contact=ada,
                        duration_seconds=184, outcome="order", summary="Ordered two margheritas for pickup at 7pm.",
                        scorable=True, score=92, status="completed")
    sub, _ = subscription_create(org=org, url="https://hooks.example.com/orders", events=["call.ended"],
                                 description="Kitchen display")
    emit(org=org, type="call.ended", data={"call_id": "c1"})
    delivery = Delivery.objects.get(subscription=sub)
    Delivery.objects.filter(pk=delivery.pk).update(status="pending", attempt_count=2, last_status_code=503,
                                                   next_attempt_at=now + timedelta(minutes=5))
    DeliveryAttempt.objects.create(organization=org, delivery=delivery, number=1, status_code=503, duration_ms=87,
                                   response_body='{"error": "kitchen display offline"}', error="HTTP 503")
    DeliveryAttempt.objects.create(organization=org, delivery=delivery, number=2, status_code=None,
                                   duration_ms=2001, error="Connection timed out")
    Subscription.objects.filter(pk=sub.pk).update(failing_since=now - timedelta(hours=3))
    return {"org": org, "admin": admin, "subscription": sub}


@pytest.mark.django_db(transaction=True)
def test_knowledge_contacts_team_keys_and_webhooks_in_a_real_browser(live_server, world, page):
    # `world` before `page`: its ORM work must run before Playwright's greenlet starts, on the test thread's own
    # database connection (one made inside the greenlet would outlive the test and block the database teardown).
    from playwright.sync_api import expect

    org = world["org"]
    log_in(page, live_server, "owner@trattoria.example")
    expect(page.get_by_test_id("current-org")).to_have_text("Trattoria Due")
    expect(nav(page, "Meetings")).to_be_visible()  # the meetings product is on for this org

    # Knowledge base: a new fact is on the runtime's very next read.
    before = knowledge(live_server, org)
    assert before.status_code == 200
    nav(page, "Knowledge base").click()
    expect(page.get_by_role("heading", name="Knowledge base", exact=True)).to_be_visible()
    expect(page.get_by_test_id("knowledge-live-note")).to_contain_text("very next knowledge read")
    shot(page, "kb-01-knowledge")
    page.get_by_test_id("create-fact").click()
    page.get_by_role("button", name="Save fact").click()  # empty: refused inline
    expect(page.get_by_test_id("error-label")).to_be_visible()
    expect(page.get_by_test_id("error-content")).to_be_visible()
    page.get_by_label("Label").fill("Delivery area")
    page.get_by_label("Content").fill("We deliver within 5 miles of Downtown, 6pm to 10pm.")
    page.get_by_label("Applies to").select_option(label="Downtown")
    shot(page, "kb-02-fact-form")
    page.get_by_role("button", name="Save fact").click()
    expect(page.get_by_text("Fact “Delivery area” saved.")).to_be_visible()
    after = knowledge(live_server, org, etag=before.headers["ETag"])
    assert after.status_code == 200 and after.headers["ETag"] != before.headers["ETag"]
    facts = {fact["label"]: fact for fact in after.json()["data"]["facts"]}
    assert facts["Delivery area"]["content"] == "We deliver within 5 miles of Downtown, 6pm to 10pm."
    assert facts["Delivery area"]["location_id"] is not None
    shot(page, "kb-03-knowledge-saved")

    # Contacts: search, a contact's page with its calls, a duplicate number refused on the phone field.
    nav(page, "Contacts").click()
    page.get_by_label("Search contacts").fill("(415) 555-0123")
    page.get_by_label("Search contacts").press("Enter")
    expect(page.get_by_test_id("contact-row")).to_have_count(1)
    shot(page, "kb-04-contacts-search")
    page.get_by_role("link", name="Ada Lovelace").click()
    expect(page.get_by_test_id("contact-call-row")).to_have_count(1)
    shot(page, "kb-05-contact-detail")
    nav(page, "Contacts").click()
    page.get_by_test_id("create-contact").click()
    page.get_by_label("Phone number").fill("+1 415-555-0123")
    page.get_by_label("Name").fill("Ada again")
    page.get_by_role("button", name="Add contact").click()
    expect(page.get_by_test_id("error-phone_number")).to_have_text("A contact with this phone number already exists.")
    shot(page, "kb-06-contact-duplicate")

    # Locations and team: a platform user is locked.
    nav(page, "Locations").click()
    expect(page.get_by_test_id("location-row")).to_have_count(2)
    shot(page, "kb-07-locations")
    nav(page, "Team").click()
    expect(page.get_by_test_id("team-member-locked")).to_have_count(1)
    shot(page, "kb-08-team")

    # An API key, shown once.
    nav(page, "API keys").click()
    page.get_by_test_id("create-api-key").click()
    page.get_by_label("Name").fill("POS sync")
    page.get_by_role("button", name="Create key").click()
    key = page.get_by_test_id("api-key-plaintext").inner_text().strip()
    assert key.startswith("va_live_") and len(key) == 40
    page.reload()
    assert page.get_by_test_id("api-key-plaintext").count() == 0 and key not in page.content()

    # A webhook subscription, its secret shown once.
    nav(page, "Webhooks").click()
    expect(page.get_by_test_id("webhook-status")).to_have_text("Failing")
    shot(page, "kb-09-webhooks")
    page.get_by_test_id("create-webhook").click()
    page.get_by_label("Endpoint URL").fill("http://hooks.example.com/crm")
    page.get_by_role("button", name="Add endpoint").click()  # no events: refused inline
    expect(page.get_by_test_id("error-events")).to_have_text("Choose at least one event type.")
    page.get_by_label("call.ended").check()
    page.get_by_role("button", name="Add endpoint").click()  # http://: refused inline by the service's URL rules
    expect(page.get_by_test_id("error-url")).to_have_text("The URL must use https://.")
    expect(page.get_by_label("call.ended")).to_be_checked()
    shot(page, "kb-10-webhook-form-errors")
    page.get_by_label("Endpoint URL").fill("https://hooks.example.com/crm")
    page.get_by_label("contact.created").check()
    page.get_by_label("Description").fill("CRM")
    page.get_by_role("button", name="Add endpoint").click()
    secret = page.get_by_test_id("webhook-secret-plaintext").inner_text().strip()
    assert secret.startswith("whsec_")
    expect(page.get_by_text("It will not be shown again.")).to_be_visible()
    page.get_by_test_id("copy-webhook-secret").click()
    expect(page.locator('[data-copy-status="new-secret"]')).not_to_be_empty()
    shot(page, "kb-11-webhook-secret")
    page.reload()
    expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
    assert page.get_by_test_id("webhook-secret-plaintext").count() == 0 and secret not in page.content()
    expect(page.get_by_test_id("webhook-row")).to_have_count(2)

    # The failing subscription's delivery log, with attempts.
    page.get_by_role("link", name="https://hooks.example.com/orders").first.click()
    expect(page.get_by_test_id("delivery-row")).to_have_count(1)
    page.locator("details.attempts summary").click()
    expect(page.get_by_test_id("attempt")).to_have_count(2)
    expect(page.get_by_text("kitchen display offline")).to_be_visible()
    shot(page, "kb-12-webhook-log")
    page.get_by_test_id("redeliver").click()
    expect(page.get_by_text("is queued for redelivery now")).to_be_visible()

    # Rotate with a grace period: the new secret is shown once.
    page.get_by_test_id("rotate-webhook").click()
    page.get_by_label("Also signs for 1 hour").check()
    page.get_by_test_id("confirm-rotate").click()
    rotated = page.get_by_test_id("webhook-secret-plaintext").inner_text().strip()
    assert rotated.startswith("whsec_") and rotated != secret
    page.reload()
    assert rotated not in page.content()

    # Phone-size screens: no sideways scrolling.
    phone = page.context.browser.new_context(
        viewport={"width": 390, "height": 844}, storage_state=page.context.storage_state()
    )
    phone_page = phone.new_page()
    for path, name in [("/knowledge/", "kb-13-knowledge-phone"), ("/settings/webhooks/", "kb-14-webhooks-phone"),
                       (f"/settings/webhooks/{world['subscription'].pk}/", "kb-15-webhook-log-phone"),
                       ("/contacts/", "kb-16-contacts-phone")]:
        phone_page.goto(f"{live_server.url}{path}")
        shot(phone_page, name)
        assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390, path
    phone.close()

