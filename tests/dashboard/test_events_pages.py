"""The Events page, the call page's "Sent to your systems" panel, and the endpoint page's test and replay forms:
members read, admins act, another org's rows never show."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.dashboard_calls import simulate
from tests.support.receiver import Receiver
from tests.support.webhooks import make_subscription
from webhooks.models import Delivery
from webhooks.services import emit
from webhooks.ssrf import masked_url

pytestmark = pytest.mark.django_db


def test_the_events_page_shows_bodies_and_deliveries_of_this_org_only(member_client, org, other_org):
    sub = make_subscription(org)
    mine = emit(org=org, type="call.ended", data={"summary": "Pizza <b>for</b> two"})
    unsent = emit(org=org, type="contact.created", data={})
    theirs = emit(org=other_org, type="call.ended", data={})
    page = member_client.get("/events/")
    assert page.status_code == 200
    html = page.content.decode()
    assert mine.id in html and unsent.id in html and theirs.id not in html
    assert "Pizza &lt;b&gt;for&lt;/b&gt; two" in html  # the body is escaped
    assert masked_url(sub.url) in html and sub.url not in html  # a member sees where events go, not the whole URL
    assert "Not sent: no enabled subscription received contact.created" in html
    filtered = member_client.get("/events/", {"type": "contact.created"}).content.decode()
    assert unsent.id in filtered and mine.id not in filtered
    bad = member_client.get("/events/", {"call": "nope"})
    assert bad.status_code == 200 and "Enter a valid UUID." in bad.content.decode()


def test_the_call_page_shows_what_was_sent_and_redeliver_comes_back_to_it(admin_client, org):
    sub = make_subscription(org, events=("call.ended",))
    call = simulate(org, "order", seed=3)[0]
    delivery = Delivery.objects.get(subscription=sub, event__call_id=call.pk)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempt_count=10, last_status_code=500)
    page = admin_client.get(f"/calls/{call.pk}")
    html = page.content.decode()
    assert "Sent to your systems" in html and "last HTTP 500" in html and sub.url in html
    back = f"/calls/{call.pk}"
    response = admin_client.post(
        f"/settings/webhooks/{sub.pk}/deliveries/{delivery.pk}/redeliver/", {"next": back}
    )
    assert response.status_code == 302 and response["Location"] == back
    assert Delivery.objects.get(pk=delivery.pk).status == "pending"
    offsite = admin_client.post(
        f"/settings/webhooks/{sub.pk}/deliveries/{delivery.pk}/redeliver/", {"next": "https://evil.example/"}
    )
    assert offsite["Location"] == f"/settings/webhooks/{sub.pk}/"


def test_an_unscorable_call_says_why_nothing_was_sent(member_client, org):
    make_subscription(org)
    call = simulate(org, "robocall", seed=1)[0]
    html = member_client.get(f"/calls/{call.pk}").content.decode()
    assert "robocall: unscorable calls send no call.ended and no follow-up events." in html


def test_an_admin_sends_a_test_event_and_sees_the_verdict(admin_client, org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    with Receiver(status=200) as receiver:
        sub = make_subscription(org, url=receiver.url)
        response = admin_client.post(f"/settings/webhooks/{sub.pk}/test/", {"type": "call.message_taken"})
        assert response.status_code == 302
        assert len(receiver.calls) == 3
    html = admin_client.get(f"/settings/webhooks/{sub.pk}/").content.decode()
    assert 'data-verdict="accepts_invalid_signatures"' in html and "call.message_taken" in html
    again = admin_client.get(f"/settings/webhooks/{sub.pk}/").content.decode()
    assert "data-verdict" not in again  # shown once
    assert not Delivery.objects.exists()


def test_members_can_neither_test_nor_replay(member_client, org):
    sub = make_subscription(org)
    assert member_client.post(f"/settings/webhooks/{sub.pk}/test/", {}).status_code == 403
    replayed = member_client.post(f"/settings/webhooks/{sub.pk}/replay/", {"since": "2026-11-01T00:00"})
    assert replayed.status_code == 403


def test_an_admin_replays_what_a_disabled_endpoint_missed(admin_client, org):
    sub = make_subscription(org, enabled=False)
    missed = emit(org=org, type="call.ended", data={})
    since = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    refused = admin_client.post(f"/settings/webhooks/{sub.pk}/replay/", {"since": since}, follow=True)
    assert "This subscription is disabled: enable it, then replay." in refused.content.decode()
    sub.enabled = True
    sub.save()
    done = admin_client.post(f"/settings/webhooks/{sub.pk}/replay/", {"since": since}, follow=True)
    assert "1 event queued" in done.content.decode()
    assert Delivery.objects.get(subscription=sub).event_id == missed.id
    too_old = admin_client.post(f"/settings/webhooks/{sub.pk}/replay/", {"since": "2020-01-01T00:00"}, follow=True)
    assert "Must be within the last 30 days." in too_old.content.decode()


def test_another_orgs_endpoint_is_404_for_test_and_replay(admin_client, other_org):
    theirs = make_subscription(other_org)
    assert admin_client.post(f"/settings/webhooks/{theirs.pk}/test/", {}).status_code == 404
    replayed = admin_client.post(f"/settings/webhooks/{theirs.pk}/replay/", {"since": "2026-11-01T00:00"})
    assert replayed.status_code == 404
