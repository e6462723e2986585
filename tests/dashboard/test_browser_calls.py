"""A real browser through the overview, the calls list, a simulated order call and the inbox: the recording plays
from its freshly minted URL, and canceling the order in the page reaches a real webhook receiver on loopback as
`call_order.status_changed` with `canceled_by: team_via_dashboard`, delivered by a real Celery worker and signed
so that the `standardwebhooks` library verifies it. Headless Debian Chromium via Playwright; screenshots go to
test-artifacts/screenshots/ (calls-*.png)."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from calls.models import Call
from devtools.simulation import RuntimeClient, Simulator, ensure_demo_configuration
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.browser import BROWSER_MARKS, log_in
from tests.support.browser import shot as support_shot
from tests.support.dashboard_calls import simulate
from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from webhooks.models import Event
from webhooks.services import subscription_create

WORKER_ENV = {"WEBHOOK_ALLOW_LOCAL_URLS": "1", "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.5"}

pytestmark = BROWSER_MARKS








def shot(page, name):
    support_shot(page, f"calls-{name}")


def poll(page, expression: str, timeout: float = 15.0) -> None:
    wait_until(lambda: page.evaluate(expression), timeout, expression)


def nav(page, name):
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)


def seed_two_weeks(org):
    """Mixed simulated calls spread over the last two weeks (the simulator starts calls up to 3 days before
    its `now`), so the overview's chart has bars on most days."""
    ensure_demo_configuration(org)
    client = RuntimeClient(org_id=str(org.pk))
    now = datetime.now(tz=UTC)
    for days_back in range(0, 13, 3):
        simulator = Simulator(client, seed=days_back, now=now - timedelta(days=days_back))
        for _ in range(4):
            simulator.play("mixed")


@pytest.mark.django_db(transaction=True)
def test_order_call_recording_and_cancel_reach_the_webhook_receiver(
    live_server, page, settings, tmp_path, celery_worker_factory
):
    from playwright.sync_api import expect

    # Another origin than the one Chromium talks to (the API's host, say): the dashboard's player must not depend on it.
    settings.BASE_URL = "http://localhost:1"
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path}},
    }
    org = OrganizationFactory(name="Trattoria Due")
    admin = MembershipFactory(organization=org, role="admin").user
    seed_two_weeks(org)
    order_call = simulate(org, "order", seed=11)[0]
    assert order_call.order.status == "new"

    with Receiver() as receiver:
        _, secret = subscription_create(org=org, url=receiver.url, events=["call_order.status_changed"])
        worker = celery_worker_factory(concurrency=1, beat=True, env=WORKER_ENV)

        # Log in.
        log_in(page, live_server, admin.email)

        # The overview: numbers and the chart.
        expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
        expect(page.get_by_test_id("calls-chart")).to_be_visible()
        assert page.get_by_test_id("chart-bar").count() >= 5
        page.get_by_test_id("chart-days-30").click()
        expect(page.get_by_test_id("chart-days-30")).to_have_attribute("aria-current", "true")
        page.get_by_test_id("chart-days-14").click()
        shot(page, "01-overview")

        # The calls list, filtered to orders.
        nav(page, "Calls").click()
        expect(page.get_by_role("heading", name="Calls", exact=True)).to_be_visible()
        shot(page, "02-calls-list")
        page.get_by_label("Outcome").select_option("order")
        page.get_by_role("button", name="Filter").click()
        row = page.locator(f'[data-call-id="{order_call.pk}"]')
        expect(row).to_be_visible()
        assert all(o == "order" for o in Call.objects.filter(
            pk__in=page.locator("[data-call-id]").evaluate_all("rows => rows.map(r => r.dataset.callId)")
        ).values_list("outcome", flat=True))
        row.get_by_role("link").first.click()

        # The call page: its URL is the call_url of call.ended.
        expect(page).to_have_url(f"{live_server.url}/calls/{order_call.pk}")
        expect(page.get_by_test_id("order-status")).to_have_text("New")
        expect(page.locator("mark").first).to_be_visible()

        # The recording plays from the freshly minted URL, on the page's own origin (its CSP allows only 'self').
        audio = page.get_by_test_id("call-recording")
        src = audio.get_attribute("src")
        assert src.startswith("/recordings/?token=")
        fetched = page.request.get(f"{live_server.url}{src}")
        assert fetched.status == 200 and fetched.headers["content-type"] == "audio/wav"
        assert fetched.body()[:4] == b"RIFF"
        # Polled from here: wait_for_function evaluates a string in the page, which its CSP (no unsafe-eval) refuses.
        poll(page, "document.querySelector('[data-testid=call-recording]').readyState >= 1")
        page.evaluate("document.querySelector('[data-testid=call-recording]').play()")
        poll(page, "document.querySelector('[data-testid=call-recording]').currentTime > 0")
        assert page.evaluate("document.querySelector('[data-testid=call-recording]').error") is None
        shot(page, "03-call-page")

        # Another tab keeps the page as it is now, to go stale.
        stale = page.context.new_page()
        stale.goto(page.url)

        # Cancel the order in the page.
        page.get_by_test_id("order-status-canceled").click()
        expect(page.get_by_text(f"Order #{order_call.order.call_order_number} is now canceled.")).to_be_visible()
        expect(page.get_by_test_id("order-status")).to_have_text("Canceled")
        expect(page.get_by_test_id("order-canceled")).to_contain_text("Team via dashboard")

        # The webhook receiver gets it, signed.
        try:
            delivered = receiver.wait_for(1, timeout=60)[0]
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{worker.log()}") from None
        payload = Webhook(secret).verify(delivered["body"], delivered["headers"])
        assert payload["type"] == "call_order.status_changed"
        assert payload["data"]["call_id"] == str(order_call.pk)
        assert payload["data"]["previous_status"] == "new" and payload["data"]["new_status"] == "canceled"
        assert payload["data"]["canceled_by"] == "team_via_dashboard"
        assert payload["data"]["changed_by"] == str(admin.pk)
        assert json.loads(delivered["body"]) == payload

    # The stale tab tries a move the canceled order no longer allows: an inline error, nothing changes.
    stale.get_by_test_id("order-status-fulfilled").click()
    expect(stale.get_by_test_id("error-status")).to_contain_text("cannot go from canceled to fulfilled")
    expect(stale.get_by_test_id("order-status")).to_have_text("Canceled")
    shot(stale, "03b-call-page-invalid-transition")
    stale.close()
    order_call.order.refresh_from_db()
    assert order_call.order.status == "canceled"
    changes = Event.objects.filter(organization=org, type="call_order.status_changed")
    assert [e.data["new_status"] for e in changes if e.data["call_id"] == str(order_call.pk)] == ["canceled"]

    # The inbox.
    nav(page, "Inbox").click()
    expect(page.get_by_role("heading", name="Inbox", exact=True)).to_be_visible()
    shot(page, "04-inbox")
    waiting = page.get_by_test_id("mark-handled").count()
    assert waiting >= 1
    first = page.get_by_test_id("inbox-item").first
    item_id = first.get_attribute("data-item-id")
    first.get_by_test_id("mark-handled").focus()
    page.keyboard.press("Enter")  # keyboard usable
    expect(page.get_by_text("marked handled.")).to_be_visible()
    expect(page.locator(f'[data-item-id="{item_id}"]')).to_have_count(0)
    assert page.get_by_test_id("mark-handled").count() == waiting - 1

    # The same pages on a phone-size screen: nothing wider than the screen.
    phone = page.context.browser.new_context(viewport={"width": 390, "height": 844},
                                             storage_state=page.context.storage_state())
    phone_page = phone.new_page()
    for name, path in (("overview", "/"), ("calls-list", "/calls/"), ("call-page", f"/calls/{order_call.pk}"),
                       ("inbox", "/inbox/")):
        phone_page.goto(f"{live_server.url}{path}")
        width = phone_page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (name, width)
        shot(phone_page, f"05-phone-{name}")
    phone.close()
