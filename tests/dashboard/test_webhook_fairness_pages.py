"""The endpoint page's health (docs/webhooks.md#endpoint-statistics) and the rate limit field of the endpoint form
(docs/webhooks.md#rate-limit): the same selectors and services as the API."""


import pytest
from django.utils import timezone

from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit, subscription_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fake_dns")]

URL = "https://hooks.example.com/voice"


@pytest.fixture
def subscription(org):
    sub, _ = subscription_create(org=org, url=URL, events=["call.ended"])
    return sub


def test_the_endpoint_page_shows_its_health_what_waits_and_why_it_is_slowed_down(admin_client, org, subscription):
    emit(org=org, type="call.ended", data={"call_id": "c1"})
    delivery = Delivery.objects.get(subscription=subscription)
    for status, error, ms in ((200, "", 40), (503, "HTTP 503", 900)):
        DeliveryAttempt.objects.create(organization=org, delivery=delivery, number=1, status_code=status,
                                       duration_ms=ms, error=error)
    Subscription.objects.filter(pk=subscription.pk).update(
        in_flight_limit=2, slowed_reason="The endpoint refused or dropped the connection.", slowed_at=timezone.now(),
    )
    body = admin_client.get(f"/settings/webhooks/{subscription.pk}/").content.decode()
    day = body[body.index('data-testid="stats-24h"'):]
    day = day[:day.index("</tr>")]
    assert "<td>2</td>" in day and "50%" in day and "<code>HTTP 503</code> ×1" in day
    assert 'data-testid="stats-waiting">1 delivery' in body
    assert ("Yes: The endpoint refused or dropped the connection. At most 2 in flight, until its next success."
            in body)


def test_a_member_sees_the_health_too(member_client, subscription):
    body = member_client.get(f"/settings/webhooks/{subscription.pk}/").content.decode()
    assert 'data-testid="webhook-stats"' in body and 'data-testid="stats-slowed">No<' in body


def test_the_form_sets_and_clears_the_rate_limit_and_refuses_one_out_of_range(admin_client, subscription):
    edit = f"/settings/webhooks/{subscription.pk}/edit/"
    fields = {"url": URL, "events": ["call.ended"]}
    assert admin_client.post(edit, {**fields, "rate_limit_per_second": "25"}).status_code == 302
    subscription.refresh_from_db()
    assert subscription.rate_limit_per_second == 25
    assert admin_client.get(edit).context["form"]["rate_limit_per_second"].value() == 25
    bad = admin_client.post(edit, {**fields, "rate_limit_per_second": "1001"})
    assert bad.status_code == 200 and bad.context["form"].errors["rate_limit_per_second"]
    subscription.refresh_from_db()
    assert subscription.rate_limit_per_second == 25
    assert admin_client.post(edit, {**fields, "rate_limit_per_second": ""}).status_code == 302
    subscription.refresh_from_db()
    assert subscription.rate_limit_per_second is None


def test_a_new_endpoint_can_be_created_with_a_rate_limit(admin_client, org):
    response = admin_client.post("/settings/webhooks/new/",
                                 {"url": URL, "events": ["call.ended"], "rate_limit_per_second": "5"})
    assert response.status_code == 302
    assert Subscription.objects.get(organization=org).rate_limit_per_second == 5
