"""The sender in-process against real loopback receivers: claim, result, schedule, disable, emails, sweep."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from tests.support.receiver import Receiver
from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks import conf
from webhooks.delivery import next_delay
from webhooks.delivery.claim import claim
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit
from webhooks.tasks import publisher

pytestmark = pytest.mark.usefixtures("allow_local")


def setup_delivery(org, receiver, **kwargs):
    sub = make_subscription(org, url=receiver.url, **kwargs)
    emit(org=org, type="call.ended", data={"call_id": "c"})
    return sub, Delivery.objects.get(subscription=sub)


def test_a_2xx_succeeds_and_a_duplicate_task_run_sends_nothing_more(org):
    with Receiver(status=204) as receiver:
        sub, delivery = setup_delivery(org, receiver)
        assert attempt_delivery(delivery.pk) == "succeeded"
        assert attempt_delivery(delivery.pk) == "skipped"
        assert len(receiver.calls) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count, delivery.last_status_code) == ("succeeded", 1, 204)
    sub.refresh_from_db()
    assert sub.last_success_at is not None and sub.failing_since is None


def test_a_live_claim_blocks_a_second_worker(org):
    with Receiver() as receiver:
        _, delivery = setup_delivery(org, receiver)
        assert claim([delivery.pk])[1]  # claimed: another worker holds it now
        assert attempt_delivery(delivery.pk) == "skipped"  # the other worker holds the lease
        assert receiver.calls == []


def test_the_retry_schedule_is_the_standard_one_with_up_to_ten_percent_jitter():
    assert conf.OUTBOX.retry_schedule() == (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
    assert conf.OUTBOX.max_attempts() == 10
    for attempt, base in enumerate(conf.DEFAULT_RETRY_SCHEDULE, start=1):
        delays = [next_delay(attempt) for _ in range(50)]
        assert all(base <= d <= base * 1.1 for d in delays)


def test_a_failure_schedules_the_next_attempt_in_the_database(org):
    with Receiver(status=500) as receiver:
        _, delivery = setup_delivery(org, receiver)
        before = timezone.now()
        assert attempt_delivery(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert delivery.status == "pending" and delivery.attempt_count == 1 and delivery.claimed_until is None
    assert before + timedelta(seconds=5) <= delivery.next_attempt_at <= timezone.now() + timedelta(seconds=5.5)
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert (attempt.number, attempt.status_code, attempt.error, attempt.trigger) == (1, 500, "HTTP 500", "scheduled")
    assert attempt.response_body == '{"ok":true}'
    assert attempt_delivery(delivery.pk) == "skipped"  # not due yet


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_retry_after_is_respected_on_429_and_5xx_gateway_errors(org, status):
    with Receiver(status=status, headers={"Retry-After": "600"}) as receiver:
        _, delivery = setup_delivery(org, receiver)
        assert attempt_delivery(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert delivery.next_attempt_at >= timezone.now() + timedelta(seconds=595)


def test_a_410_disables_the_subscription_at_once_and_emails_admins(org, admin):
    with Receiver(status=410) as receiver:
        sub, delivery = setup_delivery(org, receiver)
        assert attempt_delivery(delivery.pk) == "failed"
    sub.refresh_from_db()
    assert sub.enabled is False and "410" in sub.disabled_reason and sub.disabled_at
    delivery.refresh_from_db()
    assert delivery.status == "failed"


def test_410_email_goes_to_the_org_admins(org, admin, django_capture_on_commit_callbacks):
    with Receiver(status=410) as receiver, django_capture_on_commit_callbacks(execute=True):
        _, delivery = setup_delivery(org, receiver)
        attempt_delivery(delivery.pk)
    [message] = mail.outbox
    assert message.to == [admin.email] and "disabled" in message.subject


def test_the_tenth_failure_exhausts_the_delivery_and_emails_admins(org, admin, django_capture_on_commit_callbacks):
    with Receiver(status=500) as receiver, django_capture_on_commit_callbacks(execute=True):
        _, delivery = setup_delivery(org, receiver)
        Delivery.objects.filter(pk=delivery.pk).update(attempt_count=9)
        assert attempt_delivery(delivery.pk) == "failed"
    delivery.refresh_from_db()
    assert delivery.status == "failed" and delivery.attempt_count == 10 and delivery.next_attempt_at is None
    [message] = mail.outbox
    assert message.to == [admin.email] and delivery.event_id in message.body


def test_five_days_of_failures_disable_the_subscription_with_a_reason(org, admin, django_capture_on_commit_callbacks):
    with Receiver(status=500) as receiver, django_capture_on_commit_callbacks(execute=True):
        sub, delivery = setup_delivery(org, receiver)
        Subscription.objects.filter(pk=sub.pk).update(failing_since=timezone.now() - timedelta(days=5, minutes=1))
        assert attempt_delivery(delivery.pk) == "retry"
    sub.refresh_from_db()
    assert sub.enabled is False and sub.disabled_reason == "Every delivery failed for 5 days straight."
    assert [m.to for m in mail.outbox] == [[admin.email]]


def test_four_days_of_failures_do_not_disable(org):
    with Receiver(status=500) as receiver:
        sub, delivery = setup_delivery(org, receiver)
        Subscription.objects.filter(pk=sub.pk).update(failing_since=timezone.now() - timedelta(days=4))
        attempt_delivery(delivery.pk)
    sub.refresh_from_db()
    assert sub.enabled is True


def test_a_success_resets_the_failure_streak(org):
    with Receiver(status=200) as receiver:
        sub, delivery = setup_delivery(org, receiver)
        Subscription.objects.filter(pk=sub.pk).update(failing_since=timezone.now() - timedelta(days=4))
        attempt_delivery(delivery.pk)
    sub.refresh_from_db()
    assert sub.failing_since is None


def test_a_pending_delivery_of_a_disabled_subscription_is_not_sent(org):
    with Receiver() as receiver:
        sub, delivery = setup_delivery(org, receiver)
        Subscription.objects.filter(pk=sub.pk).update(enabled=False)
        assert attempt_delivery(delivery.pk) == "disabled"
        assert receiver.calls == []
    delivery.refresh_from_db()
    assert delivery.status == "failed" and delivery.attempt_count == 0


def test_a_manual_retry_is_logged_as_manual(org, api):
    with Receiver(status=200) as receiver:
        sub, delivery = setup_delivery(org, receiver)
        Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempt_count=10, next_attempt_at=None)
        assert api.post(f"/v1/webhook-subscriptions/{sub.pk}/deliveries/{delivery.pk}/retry").status_code == 202
        assert attempt_delivery(delivery.pk) == "succeeded"
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert (attempt.number, attempt.trigger) == (11, "manual")


def test_the_sweeper_takes_due_unheld_deliveries_only(org):
    now = timezone.now()
    sub = make_subscription(org)
    for _ in range(5):
        emit(org=org, type="call.ended", data={})
    d_fresh, d_lost, d_dead, d_live, d_future = Delivery.objects.filter(subscription=sub).order_by("pk")
    Delivery.objects.filter(pk=d_lost.pk).update(enqueued_at=now - timedelta(minutes=5))  # enqueue lost
    Delivery.objects.filter(pk=d_dead.pk).update(enqueued_at=now - timedelta(minutes=5),
                                                 claimed_until=now - timedelta(seconds=1))  # worker died
    Delivery.objects.filter(pk=d_live.pk).update(enqueued_at=None, claimed_until=now + timedelta(seconds=30))
    Delivery.objects.filter(pk=d_future.pk).update(enqueued_at=None, next_attempt_at=now + timedelta(minutes=5))
    assert publisher.sweep() == 2
    swept = set(Delivery.objects.filter(enqueued_at__gte=now).exclude(pk=d_fresh.pk).values_list("pk", flat=True))
    assert swept == {d_lost.pk, d_dead.pk}
    assert publisher.sweep() == 0  # just enqueued: left alone until WEBHOOK_REENQUEUE_AFTER_SECONDS


def test_health_selector_reports_last_success_streak_and_reason(org):
    from webhooks.selectors import subscription_list_with_health

    with Receiver(status=500) as receiver:
        sub, delivery = setup_delivery(org, receiver)
        attempt_delivery(delivery.pk)
    Subscription.objects.filter(pk=sub.pk).update(enabled=False, disabled_reason="Every delivery failed.")
    [health] = subscription_list_with_health(org)
    assert health.subscription == sub and health.failure_streak == 1 and health.last_success_at is None
    assert health.disabled_reason == "Every delivery failed." and health.pending_count == 1
