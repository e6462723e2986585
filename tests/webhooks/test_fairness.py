"""Fair delivery in the claim (docs/webhooks.md#fair-delivery): each subscription's in-flight limit, round robin
across subscriptions, replay behind live traffic, the slow-down of an endpoint that times out, refuses or answers
429, and the subscriber's rate cap as send slots. The real-worker drills are in test_fairness_drills.py."""

import socket
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from tests.support.database import connect
from tests.support.races import run_together
from tests.support.receiver import Receiver
from tests.support.webhooks import make_subscription
from webhooks.delivery import send_batch
from webhooks.delivery.claim import _ARGUMENTS, _claim, _prepare_claims, claim
from webhooks.models import Delivery, Subscription
from webhooks.services import emit

pytestmark = pytest.mark.usefixtures("allow_local")


def due(org, sub, count, *, priority=0, ago=0.0):
    """`count` pending deliveries to `sub`, due `ago` seconds ago (their events written directly)."""
    from tests.support.webhooks import make_event

    at = timezone.now() - timedelta(seconds=ago)
    rows = [
        Delivery(organization=org, event=make_event(org), subscription=sub, status="pending", next_attempt_at=at,
                 priority=priority)
        for _ in range(count)
    ]
    return Delivery.objects.bulk_create(rows)


def by_sub(rows) -> Counter:
    return Counter(row[4] for row in rows)


def test_a_fair_claim_takes_every_subscriptions_first_before_anyones_second(org):
    a, b, c = (make_subscription(org) for _ in range(3))
    due(org, b, 30, ago=60)  # a backlog, oldest of all
    due(org, c, 3, ago=30)
    due(org, a, 1)
    _, rows = claim(extra=5)
    assert by_sub(rows) == {a.pk: 1, b.pk: 2, c.pk: 2}


def test_a_subscription_never_has_more_than_its_in_flight_limit_claimed(org, settings):
    busy, quiet = make_subscription(org), make_subscription(org)
    due(org, busy, 20)
    _, first = claim(extra=50)
    assert by_sub(first) == {busy.pk: 4}
    due(org, quiet, 2)
    _, second = claim(extra=50)
    assert by_sub(second) == {quiet.pk: 2}  # the busy one is at its limit; the quiet one is not held up by it
    asked = list(Delivery.objects.filter(subscription=busy, claim_token__isnull=True).values_list("pk", flat=True))
    assert claim(asked)[1] == []  # asked for by id, the limit holds too
    settings.WEBHOOK_MAX_IN_FLIGHT = 6
    _, third = claim(extra=50)
    assert by_sub(third) == {busy.pk: 2}


def test_a_sending_run_claims_ahead_of_a_busy_subscription_only_while_no_other_run_holds_it(org, settings):
    """send_batch's claims (one token per run, `ahead` > 1) may hold ahead times the in-flight limit of a healthy
    subscription nobody else holds, which the run sends at most the limit of at once; any claim made while another
    run holds one of its deliveries gets the limit minus every live claim, and a plain claim the limit alone."""
    busy, capped, slowed = make_subscription(org), make_subscription(org), make_subscription(org)
    Subscription.objects.filter(pk=capped.pk).update(rate_limit_per_second=1000)
    Subscription.objects.filter(pk=slowed.pk).update(in_flight_limit=2)
    for sub in (busy, capped, slowed):
        due(org, sub, 40)
    run = uuid.uuid4()
    _, first, _ = _claim(extra=100, token=run, ahead=4)
    assert by_sub(first) == {busy.pk: 16, capped.pk: 4, slowed.pk: 2}  # a rate cap or a slow-down: the limit only
    assert by_sub(_claim(extra=100, token=uuid.uuid4(), ahead=4)[1]) == {}  # another run: every place is taken
    assert by_sub(_claim(extra=100, token=run, ahead=4)[1]) == {}  # the run itself: at its cap
    Delivery.objects.filter(pk__in=[r[0] for r in first if r[4] == busy.pk][:13]).update(
        claim_token=None, claimed_until=None, status="succeeded")  # 3 of the run's 16 still in flight
    assert by_sub(claim(extra=100)[1]) == {busy.pk: 1}  # a plain claim: the limit minus every live claim
    assert by_sub(_claim(extra=100, token=run, ahead=4)[1]) == {}  # another holds one now: the limit, reached
    Delivery.objects.filter(subscription=busy, claim_token__isnull=False).exclude(
        claim_token=run).update(claim_token=None, claimed_until=None, status="succeeded")
    assert by_sub(_claim(extra=100, token=run, ahead=4)[1]) == {busy.pk: 13}  # alone again: ahead, to 16


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_never_gets_more_than_its_in_flight_limit_of_posts_at_once(org):
    """However far ahead its runs claim, an endpoint sees at most WEBHOOK_MAX_IN_FLIGHT POSTs at a time: a backlog of
    60 to one subscription, two runs sending it together with 32 threads each."""
    lock, current, peak = threading.Lock(), [0], [0]

    def slow(call):
        with lock:
            current[0] += 1
            peak[0] = max(peak[0], current[0])
        time.sleep(0.02)
        with lock:
            current[0] -= 1
        return 0

    with Receiver(delay=slow) as receiver:
        sub = make_subscription(org, url=receiver.url)
        due(org, sub, 60)
        outcomes = run_together(lambda: send_batch([], extra=32), lambda: send_batch([], extra=32))
        sent = [result for results in outcomes for result in results.values()]
    assert sent.count("succeeded") == len(receiver.calls) == 60 - Delivery.objects.filter(status="pending").count()
    assert len(receiver.calls) >= 16 and peak[0] == 4, (len(receiver.calls), peak)


def test_a_run_gives_back_what_it_claimed_ahead_once_the_endpoint_slows_down(org):
    """An endpoint that starts answering 429: what the run claimed ahead of it goes back unsent, and is then sent at
    the slowed share (2 at once, then 1), never into the 429s at the full share of 4."""
    lock, spans = threading.Lock(), []

    def slow(call):
        started = time.monotonic()
        time.sleep(0.05)
        with lock:
            spans.append((started, time.monotonic()))
        return 0

    with Receiver(status=429, delay=slow) as receiver:
        sub = make_subscription(org, url=receiver.url)
        due(org, sub, 16)
        results = send_batch([], extra=32)
    first_answer = min(end for _, end in spans)
    later = [span for span in spans if span[0] >= first_answer]
    overlap = max((sum(1 for s, e in later if s <= start < e) for start, _ in later), default=0)
    assert len(spans) - len(later) == 4 and overlap <= 2, (len(spans), len(later), overlap)
    assert set(results.values()) <= {"retry", "skipped"}
    sub.refresh_from_db()
    assert sub.in_flight_limit is not None and sub.in_flight_limit <= 2


def test_a_lease_that_ran_out_frees_its_place(org):
    sub = make_subscription(org)
    due(org, sub, 6)
    _, rows = claim(extra=10)
    assert len(rows) == 4
    Delivery.objects.filter(pk__in=[r[0] for r in rows[:3]]).update(claimed_until=timezone.now() - timedelta(seconds=1))
    _, again = claim(extra=10)
    assert len(again) == 3


def test_replays_queue_behind_the_subscriptions_live_deliveries_and_never_ahead_of_another_subscription(org, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT = 2
    replaying, other = make_subscription(org), make_subscription(org)
    replayed = due(org, replaying, 10, priority=1, ago=3600)  # older than anything live
    live = due(org, replaying, 2, ago=1)
    other_live = due(org, other, 1)
    _, rows = claim(extra=3)
    assert {r[0] for r in rows} == {d.pk for d in live + other_live}
    assert not {r[0] for r in rows} & {d.pk for d in replayed}


def test_a_replay_of_one_subscription_does_not_delay_the_first_delivery_of_another(org):
    replaying, other = make_subscription(org), make_subscription(org)
    due(org, replaying, 50, priority=1, ago=600)
    fresh = due(org, other, 1)
    _, rows = claim(extra=2)
    assert fresh[0].pk in {r[0] for r in rows}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once closed: connections are refused


def make_due_again():
    Delivery.objects.filter(status="pending").update(next_attempt_at=timezone.now())


def test_an_endpoint_that_refuses_connections_is_slowed_down_and_gets_its_full_share_back_with_a_2xx(org):
    sub = make_subscription(org, url=f"http://127.0.0.1:{closed_port()}/hook")
    emit(org=org, type="call.ended", data={})
    assert set(send_batch([], extra=8).values()) == {"retry"}
    sub.refresh_from_db()
    assert sub.in_flight_limit == 2 and sub.slowed_reason == "The endpoint refused or dropped the connection."
    assert sub.slowed_at is not None
    make_due_again()
    send_batch([], extra=8)
    sub.refresh_from_db()
    assert sub.in_flight_limit == 1
    due(org, sub, 5)
    _, rows = claim(extra=8)
    assert len(rows) == 1  # one POST in flight at a time now
    Delivery.objects.update(claimed_until=None, claim_token=None)
    with Receiver() as receiver:
        Subscription.objects.filter(pk=sub.pk).update(url=receiver.url)
        make_due_again()
        assert by_sub(claim(extra=8)[1]) == {sub.pk: 1}
        Delivery.objects.update(claimed_until=None, claim_token=None)
        send_batch([], extra=1)  # one at a time until the first 2xx, then the whole share
        assert len(receiver.calls) == 6
    sub.refresh_from_db()
    assert (sub.in_flight_limit, sub.slowed_reason, sub.slowed_at) == (None, "", None)
    due(org, sub, 5)
    _, rows = claim(extra=8)
    assert len(rows) == 4  # the whole share at once


def test_a_timeout_slows_the_endpoint_down(org, monkeypatch):
    monkeypatch.setattr("webhooks.conf.TOTAL_TIMEOUT", 0.5)
    with Receiver(delay=2.0) as receiver:
        sub = make_subscription(org, url=receiver.url)
        emit(org=org, type="call.ended", data={})
        assert set(send_batch([], extra=8).values()) == {"retry"}
    sub.refresh_from_db()
    assert sub.in_flight_limit == 2 and sub.slowed_reason.startswith("The endpoint timed out")


def test_a_429_with_retry_after_pauses_the_endpoint_but_not_the_others(org):
    with Receiver(status=429, headers={"Retry-After": "30"}) as limited, Receiver() as fine:
        sub = make_subscription(org, url=limited.url)
        other = make_subscription(org, url=fine.url)
        emit(org=org, type="call.ended", data={})
        before = timezone.now()
        send_batch([], extra=8)
        assert len(limited.calls) == 1 and len(fine.calls) == 1
    sub.refresh_from_db()
    assert sub.slowed_reason == "The endpoint answered 429 Too Many Requests." and sub.in_flight_limit == 2
    assert before + timedelta(seconds=29) < sub.paused_until < timezone.now() + timedelta(seconds=31)
    make_due_again()
    due(org, other, 1)
    _, rows = claim(extra=8)
    assert by_sub(rows) == {other.pk: 1}  # nothing for the paused endpoint, even though it is due
    Subscription.objects.filter(pk=sub.pk).update(paused_until=timezone.now() - timedelta(seconds=1))
    _, rows = claim(extra=8)
    assert by_sub(rows) == {sub.pk: 1}


def test_a_rate_capped_subscription_gets_send_slots_one_period_apart(org, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT = 50
    sub = make_subscription(org)
    Subscription.objects.filter(pk=sub.pk).update(rate_limit_per_second=5)
    due(org, sub, 20)
    before = timezone.now()
    _, rows = claim(extra=50)
    slots = sorted(r[7] for r in rows)  # seconds from the claim's time on PostgreSQL's clock
    assert len(slots) == 5  # the slots of the next second only
    assert all(abs((b - a) - 0.2) < 1e-3 for a, b in zip(slots, slots[1:], strict=False))
    assert abs(slots[0]) < 1e-3  # an idle subscription's first slot is the claim's own time
    sub.refresh_from_db()
    assert before + timedelta(seconds=1) <= sub.rate_tat <= timezone.now() + timedelta(seconds=1)
    _, rows = claim(extra=50)
    assert rows == []  # the next second is handed out already
    uncapped = make_subscription(org)
    due(org, uncapped, 3)
    _, rows = claim(extra=50)
    assert by_sub(rows) == {uncapped.pk: 3} and all(r[7] is None for r in rows)


def test_the_fair_claim_reads_indexes_only(org):
    """The plan of the claim (docs/webhooks.md#fair-delivery): which subscriptions have pending deliveries by a skip
    scan of the pending index, each one's due deliveries and its in-flight count by index, no sequential scan of the
    delivery or attempt tables whatever their size."""
    sub = make_subscription(org)
    due(org, sub, 3)
    for _ in range(20):  # a queue shaped like a real one: many subscriptions, each with due work
        due(org, make_subscription(org), 10, ago=60)
    with connection.cursor() as cursor:
        # Statistics of this test's own rows, not whatever the suite's earlier tests left (a plan from those chose
        # other indexes in a full CI run); then a tiny table would make a scan the cheapest plan, so scans are off.
        cursor.execute("ANALYZE webhooks_delivery, webhooks_subscription")
        cursor.execute("SET enable_seqscan = off")
        _prepare_claims(cursor)
        params = {"lease": 0.0, "token": None, "ids": [], "limit": 8, "max_in_flight": 4, "horizon": 1.0,
                  "ahead": 1}
        plans = []
        for name in ("webhooks_claim_lock_fair", "webhooks_claim_fair"):
            cursor.execute(f"EXPLAIN EXECUTE {name}({_ARGUMENTS})", params)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        cursor.execute("RESET enable_seqscan")
    for plan in plans:
        assert "Seq Scan on webhooks_delivery" not in plan, plan
        assert "webhooks_delivery_sub_due" in plan and "webhooks_delivery_inflight" in plan, plan


# Deliveries written in bulk: `count` of one subscription, `status` (due now when pending), with their events.
_BULK_SQL = """
    WITH ev AS (
        INSERT INTO webhooks_event (id, organization_id, type, api_version, created_at, payload)
        SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), %(org)s, 'call.ended', 'v1', now(), '\\x7b7d'::bytea
          FROM generate_series(1, %(count)s) AS g
        RETURNING id
    )
    INSERT INTO webhooks_delivery (id, organization_id, created_at, updated_at, event_id, subscription_id, status,
                                   attempt_count, next_attempt_at, next_trigger, last_error, priority)
    SELECT gen_random_uuid(), %(org)s, now(), now(), ev.id, %(sub)s, %(status)s, 0,
           CASE WHEN %(status)s = 'pending' THEN now() - interval '1 minute' END, 'scheduled', '', 0
      FROM ev
"""


def _bulk(cursor, org, sub, count, status):
    cursor.execute(_BULK_SQL, {"org": org.pk, "sub": sub.pk, "count": count, "status": status})


def _claim_buffers(cursor) -> int:
    """Shared buffers the fair claim's two statements touch, planned as the claim plans them (EXPLAIN ANALYZE
    BUFFERS, rolled back)."""
    params = {"lease": 60.0, "token": None, "ids": [], "limit": 8, "max_in_flight": 4, "horizon": 1.0, "ahead": 1}
    touched = 0
    with transaction.atomic():
        cursor.execute("SET LOCAL plan_cache_mode TO force_custom_plan")
        for name in ("webhooks_claim_lock_fair", "webhooks_claim_fair"):
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE {name}({_ARGUMENTS})", params)
            plan = cursor.fetchone()[0][0]["Plan"]
            touched += plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
        transaction.set_rollback(True)
    return touched


def test_a_claim_costs_the_same_however_long_a_backlog_the_statistics_missed(org):
    """The claim's plan must not hinge on how many deliveries the statistics say are pending. Analyzed with a long
    history and a nearly empty queue (autovacuum's ANALYZE comes after a tenth of a big table has changed, so not for
    a backlog), the planner took the queue for one row. It then found which subscriptions had due work by reading
    every due delivery, and locked the picked deliveries by walking the whole queue: every claim read the backlog
    (bench.webhook_history, 10M rows of history and 400 pending: 1.5 x the claim's cost with no history). Each is now
    an index probe per subscription and per delivery, whatever the estimate."""
    subs = [make_subscription(org) for _ in range(20)]
    with connection.cursor() as cursor:
        _bulk(cursor, org, subs[0], 100_000, "succeeded")
        cursor.execute("ANALYZE webhooks_delivery, webhooks_subscription, webhooks_event")  # a quiet moment
        for sub in subs:
            _bulk(cursor, org, sub, 4, "pending")
        _prepare_claims(cursor)
        _claim_buffers(cursor)  # the session's catalog caches
        short = _claim_buffers(cursor)
        for sub in subs[1:]:
            _bulk(cursor, org, sub, 1_000, "pending")
        long = _claim_buffers(cursor)
    # A deeper pending index costs a buffer more per probe (427 -> 508 here); a read of the backlog, thousands more
    # (1,797 before; 1,151 with only the lock undone).
    assert long <= short * 1.5, (short, long)


@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_never_exceed_the_in_flight_limit(org):
    """Claims lock only the subscriptions they serve (no lock shared by all claims), so the limit must hold through
    the row locks alone: twelve claims released at once, each on its own connection, over one subscription with a
    backlog and three without, hand out exactly the limit of each, never more."""
    subs = [make_subscription(org) for _ in range(4)]
    due(org, subs[0], 60)
    for sub in subs[1:]:
        due(org, sub, 6)
    outcomes = run_together(*[lambda: claim(extra=8)[1] for _ in range(12)])
    claimed = Counter()
    for rows in outcomes:
        assert isinstance(rows, list), rows
        claimed.update(by_sub(rows))
    # A claim that found every subscription held by the others comes back empty (SKIP LOCKED; send_batch retries
    # it), so the race may leave places free; never more than the limit, and a later claim fills exactly the rest.
    assert all(claimed[sub.pk] <= 4 for sub in subs), claimed
    _, rest = claim(extra=50)
    claimed.update(by_sub(rest))
    assert claimed == {sub.pk: 4 for sub in subs}
    assert len({row[0] for rows in [*outcomes, rest] for row in rows}) == 16  # no delivery claimed twice


@pytest.mark.django_db(transaction=True)
def test_a_claim_does_not_wait_for_another_claim_holding_a_different_subscription(org):
    """While one claim (here: an open transaction holding the row lock a claim takes) has subscription A, another
    claim serves B at once and leaves A alone; A is served once the lock is gone."""
    a, b = make_subscription(org), make_subscription(org)
    due(org, a, 2, ago=10)
    due(org, b, 2)
    with connect() as holder:
        holder.execute("SELECT id FROM webhooks_subscription WHERE id = %s FOR UPDATE", [a.pk])
        outcome = run_together(lambda: claim(extra=8)[1], timeout=10)[0]
        assert by_sub(outcome) == {b.pk: 2}
    _, rows = claim(extra=8)
    assert by_sub(rows) == {a.pk: 2}


def test_claims_serve_the_subscriptions_served_longest_ago_first(org):
    """Round robin across claims: with more subscriptions due than a claim takes, the next claim starts with those
    the previous ones did not serve, whatever their backlogs' ages."""
    subs = [make_subscription(org) for _ in range(3)]
    due(org, subs[0], 10, ago=300)
    due(org, subs[1], 10, ago=200)
    due(org, subs[2], 10, ago=100)
    served = []
    for _ in range(3):
        token, rows = claim(extra=1)
        served.extend(by_sub(rows))
        Delivery.objects.filter(claim_token=token).update(claim_token=None, claimed_until=None, status="succeeded")
    assert sorted(served) == sorted(sub.pk for sub in subs)


@pytest.mark.django_db(transaction=True)
def test_a_session_that_lost_the_prepared_claims_prepares_them_again(org):
    """The claim statements are prepared once per database session; a session reset under it (DISCARD ALL, as a
    connection pooler runs between clients) costs one failed EXECUTE, then they are prepared again."""
    sub = make_subscription(org)
    due(org, sub, 3)
    claim(extra=1)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    _, rows = claim(extra=2)
    assert by_sub(rows) == {sub.pk: 2}


def test_the_claims_are_planned_for_their_own_values_every_time(org):
    """The claim statements always get a custom plan (webhooks/delivery/claim.py): a generic one is made once, on the
    statistics of that moment, and one made while the queue was analyzed nearly empty scanned the whole backlog at
    every claim. Here the tables are analyzed without this test's rows, then a backlog comes and the session claims
    more often than the five EXECUTEs after which PostgreSQL would otherwise switch to a generic plan."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE webhooks_delivery, webhooks_subscription")
    subs = [make_subscription(org) for _ in range(3)]
    for sub in subs:
        due(org, sub, 20)

    def plans():
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, generic_plans, custom_plans FROM pg_prepared_statements"
                           " WHERE name IN ('webhooks_claim_lock_fair', 'webhooks_claim_fair')")
            return {name: (generic, custom) for name, generic, custom in cursor.fetchall()}

    claim(extra=1)  # prepares the statements on this session, if an earlier test has not
    before = plans()
    for _ in range(8):
        claim(extra=1)
    after = plans()
    made = {name: (generic - before[name][0], custom - before[name][1]) for name, (generic, custom) in after.items()}
    assert made == {
        "webhooks_claim_lock_fair": (0, 8), "webhooks_claim_fair": (0, 8)
    }
