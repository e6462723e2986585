"""In a real browser: an admin sends a test event from the endpoint page to a real receiver that verifies
signatures and reads the verdict; then opens a call and sees what was sent to which endpoint, and the Events page.
Headless Debian Chromium via Playwright; screenshots in test-artifacts/screenshots/ (events-*.png)."""

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.browser import BROWSER_MARKS, log_in
from tests.support.browser import shot as support_shot
from tests.support.dashboard_calls import simulate
from tests.support.receiver import Receiver
from webhooks.services import subscription_create

pytestmark = BROWSER_MARKS


@pytest.mark.django_db(transaction=True)
def test_send_a_test_event_then_follow_a_call_to_its_deliveries(live_server, page, settings):
    from playwright.sync_api import expect

    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    org = OrganizationFactory(name="Trattoria Tre")
    admin = MembershipFactory(organization=org, role="admin").user
    with Receiver() as receiver:
        subscription, secret = subscription_create(org=org, url=receiver.url, events=["call.ended"])

        def verify(call):
            try:
                Webhook(secret).verify(call["body"], call["headers"])
            except WebhookVerificationError:
                return 400
            return 200

        receiver.status = verify
        call = simulate(org, "order", seed=5)[0]

        log_in(page, live_server, admin.email)

        page.goto(f"{live_server.url}/settings/webhooks/{subscription.pk}/")
        page.get_by_test_id("test-type").select_option("call.ended")
        page.get_by_test_id("send-test").click()
        verdict = page.get_by_test_id("test-verdict")
        expect(verdict).to_have_attribute("data-verdict", "verifies_signatures")
        expect(verdict).to_have_text("Verifies signatures")
        expect(page.get_by_test_id("test-check")).to_have_count(3)
        assert [c["headers"]["webhook-id"].startswith("evt_test_") for c in receiver.calls] == [True] * 3
        support_shot(page, "events-01-test-verdict")

        page.goto(f"{live_server.url}/calls/{call.pk}")
        panel = page.get_by_test_id("sent-panel")
        expect(panel).to_be_visible()
        delivery = panel.get_by_test_id("event-delivery")
        expect(delivery).to_have_count(1)
        expect(delivery).to_contain_text(receiver.url)
        expect(delivery).to_contain_text("Pending")
        support_shot(page, "events-02-call-sent")

        page.get_by_role("navigation", name="Main").get_by_role("link", name="Events", exact=True).click()
        expect(page.get_by_role("heading", name="Events", exact=True)).to_be_visible()
        expect(page.get_by_test_id("event-row").first).to_be_visible()
        support_shot(page, "events-03-feed")
