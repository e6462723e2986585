"""The Alerts page (dashboard/pages/alerts.py): open alerts first, the rule and the calls behind each, Acknowledge for
every member; a location manager sees its locations' alerts only; another organization's alert is the 404 page. And
Settings → Notifications takes the "alerts" kind and a recipient's locations."""

import pytest

from alerts.evaluation import evaluate
from alerts.models import Alert
from alerts.services import alert_rule_create
from knowledge.services import location_create
from notifications.models import NotificationRecipient
from tests.factories import MembershipFactory
from tests.support.alerts import MINUTE, T0, call_at
from tests.support.clients import logged_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def places(org):
    return [location_create(org=org, name=name, address="1 Main St", timezone="America/New_York",
                            phone_number=phone) for name, phone in (("Main", "+12125550101"),
                                                                    ("Harbor", "+12125550102"))]


@pytest.fixture
def alerts(org, places):
    main, harbor = places
    for place in places:
        alert_rule_create(org=org, name=f"{place.name} busy", metric="calls", comparator="gt", threshold=0,
                          window_minutes=15, location_ids=[place.pk], channels=[])
        call_at(org, T0 - MINUTE, location=place)
    alert_rule_create(org=org, name="Org quiet", metric="calls", comparator="lt", threshold=100, window_minutes=15,
                      channels=[])
    assert evaluate(now=T0)["fired"] == 3
    Alert.objects.filter(rule__name="Harbor busy").update(resolved_at=T0 + MINUTE)
    return {a.rule.name: a for a in Alert.objects.select_related("rule")}


def test_open_alerts_first_with_their_rule_and_calls(member_client, alerts, places):
    body = member_client.get("/alerts/").content.decode()
    order = [body.index(name) for name in ("Main busy", "Org quiet", "Harbor busy")]
    assert order[2] > max(order[:2])  # the resolved one after both open ones
    assert f"/calls/?since=2026-11-25&amp;until=2026-11-25&amp;location={places[0].pk}" in body
    assert "Rule: calls greater than 0.0 over 15 minutes" in body


def test_a_member_acknowledges_once(member_client, member, alerts):
    alert = alerts["Main busy"]
    response = member_client.post(f"/alerts/{alert.pk}/acknowledge")
    assert response.status_code == 302
    alert.refresh_from_db()
    assert (alert.acknowledged_by, alert.acknowledged_at is not None) == (member.email, True)
    first = alert.acknowledged_at
    member_client.post(f"/alerts/{alert.pk}/acknowledge")
    alert.refresh_from_db()
    assert alert.acknowledged_at == first
    assert member_client.get(f"/alerts/{alert.pk}/").status_code == 200


def test_a_location_manager_sees_its_locations_alerts_only(org, alerts, places):
    manager = MembershipFactory(organization=org, role="location_manager", location_ids=[places[0].id])
    client = logged_in(manager.user)
    body = client.get("/alerts/").content.decode()
    assert "Main busy" in body and "Harbor busy" not in body and "Org quiet" not in body
    for name in ("Harbor busy", "Org quiet"):
        assert client.get(f"/alerts/{alerts[name].pk}/").status_code == 404
        assert client.post(f"/alerts/{alerts[name].pk}/acknowledge").status_code == 404
    assert Alert.objects.filter(acknowledged_at__isnull=False).count() == 0


def test_another_organizations_alert_is_404(other_org, alerts):
    outsider = MembershipFactory(organization=other_org, role="admin").user
    client = logged_in(outsider)
    alert = alerts["Main busy"]
    assert client.get(f"/alerts/{alert.pk}/").status_code == 404
    assert client.post(f"/alerts/{alert.pk}/acknowledge").status_code == 404
    assert "Main busy" not in client.get("/alerts/").content.decode()


def test_a_recipient_limited_to_locations_hears_about_them(admin_client, places):
    response = admin_client.post("/settings/notifications/", {
        "email": "main@acme.example", "alerts": "on", "location_ids": [str(places[0].pk)]})
    assert response.status_code == 302, response.content.decode()[:2000]
    recipient = NotificationRecipient.objects.get(email="main@acme.example")
    assert (recipient.alerts, recipient.location_ids) == (True, [places[0].pk])
    assert "1 location only" in admin_client.get("/settings/notifications/").content.decode()


def test_an_admin_sets_a_locations_opening_hours(admin_client, places):
    main = places[0]
    form = {"name": "Main", "address": "1 Main St", "timezone": "America/New_York", "phone_number": "+12125550101",
            "hours_mon": "09:00-12:00, 13:00-17:00", "hours_sat": "10:00-14:00"}
    response = admin_client.post(f"/locations/{main.pk}/edit/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    main.refresh_from_db()
    assert main.weekly_hours == [{"day": "mon", "start": "09:00", "end": "12:00"},
                                 {"day": "mon", "start": "13:00", "end": "17:00"},
                                 {"day": "sat", "start": "10:00", "end": "14:00"}]
    page = admin_client.get(f"/locations/{main.pk}/edit/").content.decode()
    assert 'value="09:00-12:00, 13:00-17:00"' in page
    response = admin_client.post(f"/locations/{main.pk}/edit/", {**form, "hours_tue": "17:00-09:00"})
    assert response.status_code == 200
    assert "Opening hours: Item 2: start must be before end." in response.content.decode()
    main.refresh_from_db()
    assert len(main.weekly_hours) == 3
