"""Subscription health (last success, failure streak, pending count, disabled reason): the values follow the
rules, and a health read is one query whatever the number of subscriptions (the list, one subscription, the
detail page)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.errors import NotFound
from tests.support.clients import logged_in
from tests.support.webhooks import make_attempt, make_delivery, make_subscription
from webhooks import selectors
from webhooks.models import Subscription


def _unhealthy_subscription(org, i):
    """A failing subscription that once succeeded: 2 pending deliveries, failures before and after the success."""
    now = timezone.now()
    sub = make_subscription(org, url=f"https://hooks.example.com/{i}")
    pending, done = make_delivery(org, sub, status="pending"), make_delivery(org, sub, status="failed")
    make_delivery(org, sub, status="pending")
    make_attempt(org, done, 1, 500, at=now - timedelta(hours=3))  # before the last success: not in the streak
    make_attempt(org, done, 2, 200, at=now - timedelta(hours=2))
    make_attempt(org, done, 3, 503, at=now - timedelta(hours=1))
    make_attempt(org, pending, 1, None, at=now - timedelta(minutes=30))  # a connection error counts
    make_attempt(org, pending, 2, 302, at=now - timedelta(minutes=10))  # a redirect is a failure
    Subscription.objects.filter(pk=sub.pk).update(
        last_success_at=now - timedelta(hours=2), failing_since=now - timedelta(hours=1),
        enabled=False, disabled_reason="Every delivery failed.",
    )
    return sub


@pytest.mark.parametrize("count", [1, 10])
def test_subscription_health_list_is_one_query_whatever_the_number_of_subscriptions(
    org, django_assert_num_queries, count
):
    for i in range(count):
        _unhealthy_subscription(org, i)
    with django_assert_num_queries(1):
        health = selectors.subscription_list_with_health(org)
    assert len(health) == count
    assert {(h.failure_streak, h.pending_count, h.disabled_reason) for h in health} == {
        (3, 2, "Every delivery failed.")
    }


def test_health_values_match_the_rules(org, other_org):
    now = timezone.now()
    failing = _unhealthy_subscription(org, "failing")
    never_ok = make_subscription(org, url="https://hooks.example.com/never")
    d = make_delivery(org, never_ok)
    make_attempt(org, d, 1, 500)
    make_attempt(org, d, 2, 404)
    Subscription.objects.filter(pk=never_ok.pk).update(failing_since=now - timedelta(hours=1))
    healthy = make_subscription(org, url="https://hooks.example.com/ok")
    make_attempt(org, make_delivery(org, healthy, status="succeeded"), 1, 500)  # old failure; failing_since is None
    make_subscription(other_org)  # another org's: never listed
    by_pk = {h.subscription.pk: h for h in selectors.subscription_list_with_health(org)}
    assert list(by_pk) == [healthy.pk, never_ok.pk, failing.pk]  # newest first
    got = {pk: (h.failure_streak, h.pending_count, h.disabled_reason) for pk, h in by_pk.items()}
    assert got == {failing.pk: (3, 2, "Every delivery failed."), never_ok.pk: (2, 0, ""), healthy.pk: (0, 0, "")}
    one = selectors.subscription_get_with_health(org=org, subscription_id=failing.pk)
    assert one == by_pk[failing.pk]
    with pytest.raises(NotFound):  # another org's id: the same NotFound as a missing one
        selectors.subscription_get_with_health(org=other_org, subscription_id=failing.pk)


@pytest.mark.parametrize("count", [1, 10])
def test_single_subscription_health_is_one_query(org, django_assert_num_queries, count):
    subs = [_unhealthy_subscription(org, i) for i in range(count)]
    with django_assert_num_queries(1):
        health = selectors.subscription_get_with_health(org=org, subscription_id=subs[0].pk)
    assert (health.subscription, health.failure_streak, health.pending_count) == (subs[0], 3, 2)


def test_the_detail_page_does_not_compute_health_for_every_subscription(org, admin):
    client = logged_in(admin)
    target = _unhealthy_subscription(org, "target")

    def detail_queries():
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(f"/settings/webhooks/{target.pk}/")
        assert response.status_code == 200 and response.context["health"].failure_streak == 3
        return len(ctx.captured_queries)

    detail_queries()  # the first request of a session writes a few rows once
    alone = detail_queries()
    for i in range(10):
        _unhealthy_subscription(org, i)
    assert detail_queries() == alone
