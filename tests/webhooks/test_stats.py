"""GET /v1/webhook-subscriptions/{id}/stats: an endpoint's health over 24 h and 7 d, what is waiting, whether it is
slowed down; computed from indexes (the plan is held here), another org's id a 404."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core.timefmt import iso_ms
from tests.support.webhooks import make_attempt, make_delivery, make_event, make_subscription
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.selectors import _STATS_SQL, STATS_WINDOWS, TOP_ERRORS

EMPTY_WINDOW = {"attempts": 0, "succeeded": 0, "success_rate": None, "p50_ms": None, "p95_ms": None, "top_errors": []}


def attempt(org, delivery, *, status, error="", ms=5, hours_ago=1.0):
    row = make_attempt(org, delivery, 1, status, at=timezone.now() - timedelta(hours=hours_ago))
    DeliveryAttempt.objects.filter(pk=row.pk).update(duration_ms=ms, error=error)
    return row


def test_a_new_endpoint_has_empty_stats(api, org):
    sub = make_subscription(org)
    response = api.get(f"/v1/webhook-subscriptions/{sub.pk}/stats")
    assert response.status_code == 200
    assert response.json() == {"data": {
        "windows": {"24h": EMPTY_WINDOW, "7d": EMPTY_WINDOW},
        "waiting": {"count": 0, "oldest_created_at": None, "oldest_age_seconds": None},
        "slowed_down": {"active": False, "reason": "", "since": None, "in_flight_limit": 4, "paused_until": None},
    }}


def test_stats_count_each_window_with_success_rate_percentiles_and_top_errors(api, org, other_org):
    sub = make_subscription(org)
    delivery = make_delivery(org, sub, status=Delivery.Status.SUCCEEDED)
    for ms in (10, 20, 30, 40, 50, 60, 70, 80, 90, 100):
        attempt(org, delivery, status=200, ms=ms)
    attempt(org, delivery, status=503, error="HTTP 503", ms=500)
    attempt(org, delivery, status=503, error="HTTP 503", ms=500)
    attempt(org, delivery, status=None, error="Timeout: no complete response within 15 s", ms=15000)
    attempt(org, delivery, status=200, ms=7, hours_ago=48)  # 7 d only
    attempt(org, delivery, status=None, error="ConnectionError: refused", hours_ago=72)  # 7 d only
    attempt(org, delivery, status=500, error="HTTP 500", hours_ago=24 * 8)  # older than both windows
    other = make_subscription(other_org)  # another endpoint's attempts count for it alone
    attempt(other_org, make_delivery(other_org, other), status=500, error="HTTP 500")
    data = api.get(f"/v1/webhook-subscriptions/{sub.pk}/stats").json()["data"]
    assert data["windows"]["24h"] == {
        "attempts": 13, "succeeded": 10, "success_rate": round(10 / 13, 4), "p50_ms": 70, "p95_ms": 15000,
        "top_errors": [{"error": "HTTP 503", "count": 2},
                       {"error": "Timeout: no complete response within 15 s", "count": 1}],
    }
    week = data["windows"]["7d"]
    assert (week["attempts"], week["succeeded"], week["success_rate"]) == (15, 11, round(11 / 15, 4))
    assert week["top_errors"] == [
        {"error": "HTTP 503", "count": 2}, {"error": "ConnectionError: refused", "count": 1},
        {"error": "Timeout: no complete response within 15 s", "count": 1},
    ]


def test_stats_show_the_deliveries_waiting_and_the_age_of_the_oldest(api, org):
    sub = make_subscription(org)
    old = make_delivery(org, sub, status=Delivery.Status.PENDING)
    Delivery.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(minutes=10))
    make_delivery(org, sub, status=Delivery.Status.PENDING)
    make_delivery(org, sub, status=Delivery.Status.SUCCEEDED)
    old.refresh_from_db()
    waiting = api.get(f"/v1/webhook-subscriptions/{sub.pk}/stats").json()["data"]["waiting"]
    assert waiting["count"] == 2 and waiting["oldest_created_at"] == iso_ms(old.created_at)
    assert 600 <= waiting["oldest_age_seconds"] < 660


def test_stats_say_whether_and_why_the_endpoint_is_slowed_down(api, org):
    sub = make_subscription(org)
    at = timezone.now()
    until = at + timedelta(seconds=30)
    Subscription.objects.filter(pk=sub.pk).update(
        in_flight_limit=1, slowed_reason="The endpoint answered 429 Too Many Requests.", slowed_at=at,
        paused_until=until,
    )
    slowed = api.get(f"/v1/webhook-subscriptions/{sub.pk}/stats").json()["data"]["slowed_down"]
    assert slowed == {"active": True, "reason": "The endpoint answered 429 Too Many Requests.", "since": iso_ms(at),
                      "in_flight_limit": 1, "paused_until": iso_ms(until)}


def test_another_orgs_subscription_stats_are_a_404_like_a_missing_one(api, other_org):
    theirs = make_subscription(other_org)
    response = api.get(f"/v1/webhook-subscriptions/{theirs.pk}/stats")
    missing = api.get("/v1/webhook-subscriptions/00000000-0000-0000-0000-000000000000/stats")
    assert response.status_code == missing.status_code == 404
    assert response.content == missing.content


def test_the_stats_are_index_range_scans_never_a_scan_of_the_log(org):
    """The plan (docs/webhooks.md#endpoint-statistics): each window an index-only scan of
    webhooks_attempt_sub_created, the errors the partial webhooks_attempt_sub_failed, the waiting deliveries the
    pending-only webhooks_delivery_sub_due: the cost is this endpoint's own recent attempts and queue."""
    sub = make_subscription(org)
    now = timezone.now()
    # A log and a queue shaped like real ones (many subscriptions, each with attempts, failures and pending
    # deliveries), and their statistics rather than whatever the suite's earlier tests left: on near-empty tables the
    # planner may take any index that covers the columns.
    for other in [make_subscription(org) for _ in range(20)]:
        for number in range(10):
            make_attempt(org, make_delivery(org, other), 1, 200 if number % 2 else 500)
        Delivery.objects.bulk_create([Delivery(organization=org, event=make_event(org), subscription=other,
                                               status="pending", next_attempt_at=now) for _ in range(10)])
    DeliveryAttempt.objects.filter(organization=org, status_code=500).update(error="HTTP 500")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE webhooks_delivery, webhooks_deliveryattempt")
    params = {"sub": sub.pk, "names": [n for n, _ in STATS_WINDOWS], "starts": [now - s for _, s in STATS_WINDOWS],
              "top": TOP_ERRORS}
    plans = []
    with connection.cursor() as cursor:
        # The test tables are tiny and shared with the rest of the suite (their statistics vary with what ran before):
        # a sequential or bitmap scan could be the cheapest plan here, so only index range scans are left.
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_bitmapscan = off")
        for statement in _STATS_SQL.split(";"):
            cursor.execute("EXPLAIN " + statement, params)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_bitmapscan")
    # Index-only or not depends on the visibility map's state (vacuum timing), not on the query: both read the range.
    assert re.search(r"Index (Only )?Scan using webhooks_attempt_sub_created", plans[0]), plans[0]
    assert "webhooks_attempt_sub_failed" in plans[1]
    assert "webhooks_delivery_sub_due" in plans[2]
    assert not any("Seq Scan on webhooks_" in plan for plan in plans)


@pytest.mark.parametrize("window", [name for name, _ in STATS_WINDOWS])
def test_the_stats_query_is_one_round_trip(api, org, django_assert_max_num_queries, window):
    sub = make_subscription(org)
    make_attempt(org, make_delivery(org, sub), 1, 200)
    with django_assert_max_num_queries(6):  # the key, its org, the subscription, the stats (one round trip)
        assert api.get(f"/v1/webhook-subscriptions/{sub.pk}/stats").json()["data"]["windows"][window]["attempts"]
