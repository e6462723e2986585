"""The Alerts page and the Analytics page in a real browser, checked with axe-core's WCAG 2 A and AA rules
(tests/support/accessibility.py): the Alerts page lists open alerts first and acknowledges one; the Analytics page
no longer nests its charts' links inside an image (`nested-interactive`)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from alerts.evaluation import evaluate
from alerts.models import Alert
from alerts.services import alert_rule_create
from calls.models import Call
from knowledge.services import location_create
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.accessibility import assert_accessible
from tests.support.browser import BROWSER_MARKS, log_in, shot

pytestmark = BROWSER_MARKS


def _org_with_alerts():
    org = OrganizationFactory(name="Harbor Pizza")
    admin = MembershipFactory(organization=org, role="admin").user
    place = location_create(org=org, name="Harbor", address="2 Harbor Rd", timezone="America/New_York",
                            phone_number="+12125550101")
    now = timezone.now().replace(second=0, microsecond=0)
    for n in range(3):
        Call.objects.create(organization=org, runtime_call_id=f"rt-{n}", location=place, status="completed",
                            started_at=now - timedelta(minutes=5 + n))
    alert_rule_create(org=org, name="Busy harbor", metric="calls", comparator="gt", threshold=1, window_minutes=15,
                      location_ids=[place.pk], channels=[])
    alert_rule_create(org=org, name="Quiet overall", metric="calls", comparator="lt", threshold=100,
                      window_minutes=15, channels=[])
    assert evaluate(now=now)["fired"] == 2
    first = Alert.objects.get(rule__name="Quiet overall")
    Alert.objects.filter(pk=first.pk).update(resolved_at=now)
    return org, admin


@pytest.mark.django_db(transaction=True)
def test_the_alerts_page_lists_open_first_acknowledges_and_passes_axe(live_server, page):
    from playwright.sync_api import expect

    org, admin = _org_with_alerts()
    log_in(page, live_server, admin.email)
    page.goto(f"{live_server.url}/alerts/")
    items = page.get_by_test_id("alert")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("Busy harbor")  # open first
    expect(items.nth(0)).to_contain_text("Open")
    expect(items.nth(1)).to_contain_text("Resolved")
    assert "location=" in items.nth(0).get_by_test_id("alert-calls-link").get_attribute("href")
    assert_accessible(page)
    shot(page, "alerts-01-list")

    items.nth(0).get_by_test_id("acknowledge").click()
    expect(page.get_by_text("Alert acknowledged.")).to_be_visible()
    expect(page.get_by_test_id("alert").nth(0)).to_contain_text(f"acknowledged by {admin.email}")
    assert_accessible(page)

    alert = Alert.objects.get(rule__name="Busy harbor")
    page.goto(f"{live_server.url}/alerts/{alert.pk}/")
    expect(page.get_by_test_id("alert")).to_have_count(1)
    assert_accessible(page)


@pytest.mark.django_db(transaction=True)
def test_the_analytics_page_passes_axe(live_server, page):
    from playwright.sync_api import expect

    org, admin = _org_with_alerts()
    log_in(page, live_server, admin.email)
    page.goto(f"{live_server.url}/analytics/")
    expect(page.get_by_test_id("days-chart")).to_be_visible()
    assert_accessible(page)
