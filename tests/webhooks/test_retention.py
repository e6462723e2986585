"""The delivery log keeps 30 days: older attempts, finished deliveries and their events go; pending ones stay."""

from datetime import timedelta

from django.utils import timezone

from tests.webhooks.helpers import make_subscription
from webhooks.models import Delivery, DeliveryAttempt, Event
from webhooks.retention import delivery_log_purge
from webhooks.services import emit


def _age(queryset, days):
    queryset.update(created_at=timezone.now() - timedelta(days=days))


def _attempt(delivery, **fields):
    return DeliveryAttempt.objects.create(
        organization_id=delivery.organization_id, delivery=delivery, number=1, status_code=500, **fields
    )


def test_old_attempts_and_finished_deliveries_go_and_pending_ones_stay(org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    make_subscription(org, url="http://127.0.0.1:9/hook")
    old_done, old_pending, young = (emit(org=org, type="call.ended", data={"n": n}) for n in range(3))
    done = Delivery.objects.get(event=old_done)
    Delivery.objects.filter(pk=done.pk).update(status=Delivery.Status.SUCCEEDED)
    pending = Delivery.objects.get(event=old_pending)
    kept_attempt = _attempt(Delivery.objects.get(event=young))
    for delivery in (done, pending):
        _attempt(delivery)
    _age(DeliveryAttempt.objects.exclude(pk=kept_attempt.pk), 31)
    _age(Delivery.objects.filter(event__in=[old_done, old_pending]), 31)
    _age(Event.objects.filter(pk__in=[old_done.pk, old_pending.pk]), 31)

    assert delivery_log_purge() == 2

    assert list(DeliveryAttempt.objects.all()) == [kept_attempt]
    assert not Delivery.objects.filter(pk=done.pk).exists()
    assert not Event.objects.filter(pk=old_done.pk).exists()
    assert Delivery.objects.filter(pk=pending.pk).exists()  # still owed to its receiver
    assert Event.objects.filter(pk__in=[old_pending.pk, young.pk]).count() == 2


def test_nothing_younger_than_30_days_goes(org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    make_subscription(org, url="http://127.0.0.1:9/hook")
    event = emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(event=event)
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.FAILED)
    _attempt(delivery)
    _age(DeliveryAttempt.objects.all(), 29)
    assert delivery_log_purge() == 0
    assert DeliveryAttempt.objects.count() == 1 and Delivery.objects.count() == 1 and Event.objects.count() == 1


def test_a_backlog_larger_than_a_batch_goes_in_several_batches(org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    make_subscription(org, url="http://127.0.0.1:9/hook")
    events = [emit(org=org, type="call.ended", data={"n": n}) for n in range(5)]
    Delivery.objects.update(status=Delivery.Status.SUCCEEDED)
    for delivery in Delivery.objects.all():
        _attempt(delivery)
    _age(DeliveryAttempt.objects.all(), 31)
    _age(Delivery.objects.all(), 31)
    _age(Event.objects.filter(pk__in=[e.pk for e in events]), 31)
    assert delivery_log_purge(batch=2) == 5  # 2, 2 and 1 attempts; then deliveries and events likewise
    assert not DeliveryAttempt.objects.exists() and not Delivery.objects.exists() and not Event.objects.exists()
