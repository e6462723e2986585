"""Per-organization quotas of the webhooks app (issue 24 item 5): subscriptions per org (409 `subscriptions`),
replays and recovers (one in progress per subscription: 409 `replay`; deliveries queued per org per hour: 429 with
Retry-After). Each: reached, the exact error, its place freed, and another organization untouched."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import Conflict
from core.timefmt import iso_ms
from tests.support.races import run_together
from tests.support.webhooks import make_subscription
from webhooks import services
from webhooks.models import Delivery, ReplayRun, Subscription
from webhooks.quotas import ReplayQuotaReached
from webhooks.replay import subscription_replay
from webhooks.services import emit

URL = "https://hooks.example.com/in"
SUBSCRIPTIONS_FULL = {"error": "conflict", "details": {"field": "subscriptions"}}
REPLAY_IN_PROGRESS = {"error": "conflict", "details": {"field": "replay"}}


def create(api):
    return api.post("/v1/webhook-subscriptions", {"url": URL, "events": ["call.ended"]}, format="json")


def test_the_subscription_quota_is_409_subscriptions_and_a_delete_frees_a_place(
    api, other_api, org, settings, fake_dns
):
    settings.QUOTA_SUBSCRIPTIONS_PER_ORG = 2
    assert [create(api).status_code for _ in range(2)] == [201, 201]
    refused = create(api)
    assert (refused.status_code, refused.json()) == (409, SUBSCRIPTIONS_FULL)
    assert Subscription.objects.filter(organization=org).count() == 2
    # Another organization has its own 2.
    assert [create(other_api).status_code for _ in range(2)] == [201, 201]
    first = Subscription.objects.filter(organization=org).first()
    assert api.delete(f"/v1/webhook-subscriptions/{first.pk}").status_code == 204
    assert create(api).status_code == 201


def test_the_subscription_quota_defaults_to_20(api, org, fake_dns):
    for _ in range(19):
        make_subscription(org)
    assert create(api).status_code == 201
    refused = create(api)
    assert (refused.status_code, refused.json()) == (409, SUBSCRIPTIONS_FULL)


def test_the_quota_error_says_what_to_do(org, settings, fake_dns):
    settings.QUOTA_SUBSCRIPTIONS_PER_ORG = 1
    make_subscription(org)
    with pytest.raises(Conflict) as refused:
        services.subscription_create(org=org, url=URL, events=["call.ended"])
    assert refused.value.message == (
        "This organization has 1 webhook subscriptions, the most it may have (QUOTA_SUBSCRIPTIONS_PER_ORG = 1). "
        "Delete a subscription to create another."
    )


@pytest.mark.django_db(transaction=True)
def test_concurrent_creations_never_pass_the_quota(org, settings, fake_dns):
    settings.QUOTA_SUBSCRIPTIONS_PER_ORG = 3
    make_subscription(org)

    def one():
        try:
            services.subscription_create(org=org, url=URL, events=["call.ended"])
            return "created"
        except Conflict as exc:
            return exc.field

    outcomes = run_together(*[one] * 6, timeout=60)
    assert sorted(outcomes) == ["created"] * 2 + ["subscriptions"] * 4
    assert Subscription.objects.filter(organization=org).count() == 3


def replay(api, sub, **body):
    body.setdefault("since", iso_ms(timezone.now() - timedelta(hours=1)))
    return api.post(f"/v1/webhook-subscriptions/{sub.pk}/replay", body, format="json")


def recover(api, sub):
    since = iso_ms(timezone.now() - timedelta(hours=1))
    return api.post(f"/v1/webhook-subscriptions/{sub.pk}/recover", {"since": since}, format="json")


def _missed(org, sub, count):
    """`count` events `sub` never got (emitted while it was disabled)."""
    sub.enabled = False
    sub.save()
    events = [emit(org=org, type="call.ended", data={"n": n}) for n in range(count)]
    sub.enabled = True
    sub.save()
    return events


def test_one_replay_in_progress_per_subscription(api, org):
    sub = make_subscription(org)
    other = make_subscription(org)
    _missed(org, sub, 2)
    assert replay(api, sub).json() == {"data": {"queued": 2}}
    # The same replay again queues nothing, as before: no error.
    assert replay(api, sub).json() == {"data": {"queued": 0}}
    # Something new to queue while the first one's deliveries wait: refused, nothing queued.
    emit(org=org, type="call.ended", data={"late": True})
    Delivery.objects.filter(subscription=other).update(status="failed")
    Delivery.objects.filter(subscription=sub, priority=0).update(status="failed")
    queued_before = Delivery.objects.filter(subscription=sub, status="pending").count()
    refused = replay(api, sub)
    assert (refused.status_code, refused.json()) == (409, REPLAY_IN_PROGRESS)
    refused = recover(api, sub)
    assert (refused.status_code, refused.json()) == (409, REPLAY_IN_PROGRESS)
    assert Delivery.objects.filter(subscription=sub, status="pending").count() == queued_before
    # Another subscription is not held up by it.
    assert recover(api, other).status_code == 202
    # Once delivered, the next one runs.
    Delivery.objects.filter(subscription=sub, status="pending").update(status="succeeded")
    assert replay(api, sub).json() == {"data": {"queued": 1}}


def test_deliveries_queued_by_replays_per_org_and_hour(api, other_api, org, other_org, settings):
    settings.QUOTA_REPLAY_DELIVERIES_PER_HOUR = 3
    first = make_subscription(org)
    _missed(org, first, 2)
    second = make_subscription(org)  # created after: it missed both
    assert replay(api, first).json() == {"data": {"queued": 2}}
    refused = replay(api, second)  # 2 more would make 4 in the hour
    assert (refused.status_code, refused.json()) == (429, {"error": "rate_limited"})
    assert 3500 <= int(refused["Retry-After"]) <= 3600  # when the first replay's 2 are an hour old
    assert not Delivery.objects.filter(subscription=second).exists()
    # Recover counts toward the same quota.
    Delivery.objects.filter(subscription=first).update(status="failed")
    refused = recover(api, first)
    assert (refused.status_code, refused.json()) == (429, {"error": "rate_limited"})
    assert not Delivery.objects.filter(subscription=first, status="pending").exists()
    # Another organization's quota is its own.
    theirs = make_subscription(other_org)
    _missed(other_org, theirs, 3)
    assert replay(other_api, theirs).json() == {"data": {"queued": 3}}
    # An hour later the place is free again.
    ReplayRun.objects.filter(organization=org).update(created_at=timezone.now() - timedelta(hours=1, seconds=1))
    assert replay(api, second).json() == {"data": {"queued": 2}}


def test_one_replay_bigger_than_the_hourly_quota_is_400(api, org, settings):
    settings.QUOTA_REPLAY_DELIVERIES_PER_HOUR = 3
    sub = make_subscription(org)
    _missed(org, sub, 4)
    response = replay(api, sub)
    assert (response.status_code, response.json()) == (400, {"error": "Validation failed", "details": {
        "formErrors": [], "fieldErrors": {"since": [
            "This would queue 4 deliveries, more than the 3 an organization may queue by replays and recovers in an "
            "hour: choose a shorter range."]}}})
    assert not Delivery.objects.filter(subscription=sub).exists()


def test_the_replay_quota_defaults_to_100000(settings):
    from voiceagent import settings as defaults

    assert defaults.QUOTA_REPLAY_DELIVERIES_PER_HOUR == 100_000
    assert defaults.QUOTA_SUBSCRIPTIONS_PER_ORG == 20
    assert defaults.QUOTA_API_KEYS_PER_ORG == 50


def test_the_dashboard_says_why_a_subscription_is_refused(org, admin, settings, fake_dns):
    from tests.support.clients import logged_in

    settings.QUOTA_SUBSCRIPTIONS_PER_ORG = 1
    make_subscription(org)
    response = logged_in(admin).post("/settings/webhooks/new/", {"url": URL, "events": ["call.ended"],
                                                                 "description": ""})
    assert response.status_code == 200
    assert ("This organization has 1 webhook subscriptions, the most it may have (QUOTA_SUBSCRIPTIONS_PER_ORG = 1). "
            "Delete a subscription to create another.") in response.content.decode()
    assert Subscription.objects.filter(organization=org).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_replays_never_pass_the_hourly_quota(org, settings):
    """Four subscriptions of one organization replay 2 events each at once, with room for 5 in the hour: the
    organization's row lock lets exactly two through."""
    settings.QUOTA_REPLAY_DELIVERIES_PER_HOUR = 5
    events = [emit(org=org, type="call.ended", data={"n": n}) for n in range(2)]
    subs = [make_subscription(org) for _ in range(4)]  # created after: each missed both
    since = timezone.now() - timedelta(hours=1)

    def one(sub):
        try:
            return subscription_replay(subscription=sub, since=since)
        except ReplayQuotaReached:
            return "refused"

    outcomes = run_together(*(lambda sub=sub: one(sub) for sub in subs), timeout=60)
    assert sorted(outcomes, key=str) == [2, 2, "refused", "refused"]
    assert Delivery.objects.filter(event__in=events).count() == 4
    assert sum(ReplayRun.objects.filter(organization=org).values_list("queued", flat=True)) == 4
