"""The evaluation (alerts.evaluation.evaluate) at minutes the test chooses: each metric fires once while its condition
holds, resolves once it has been back for a whole window, and does not fire again within the cooldown; e-mails and
events follow the rule's channels and the recipients' locations."""

from datetime import datetime, timedelta

import pytest

from alerts.evaluation import evaluate
from alerts.models import Alert
from alerts.services import alert_rule_create
from notifications.models import EmailNotification
from notifications.services import recipient_create
from tests.support.alerts import MINUTE, T0, attempt_at, call_at, callback_at, escalation_at
from webhooks.models import Delivery, Event, Subscription
from webhooks.services import subscription_create

pytestmark = pytest.mark.django_db

# metric -> (threshold, how to make one "bad" unit at a time, how many units breach it, a good unit or None)
CASES = {
    "calls": (2, lambda org, when: call_at(org, when), 3, None),
    "abandoned_calls": (2, lambda org, when: call_at(org, when, status="abandoned"), 3, None),
    "callbacks_waiting": (2, lambda org, when: callback_at(org, when), 3, None),
    "escalations_waiting": (2, lambda org, when: escalation_at(org, when), 3, None),
    "unanswered_question_rate": (0.5, lambda org, when: call_at(org, when, unanswered=2), 3,
                                 lambda org, when: call_at(org, when)),
    "webhook_failure_rate": (0.5, lambda org, when: attempt_at(org, when, ok=False), 3,
                             lambda org, when: attempt_at(org, when, ok=True)),
}


def alerts_of(rule):
    return list(Alert.objects.filter(rule=rule).order_by("triggered_at"))


@pytest.mark.parametrize("metric", list(CASES))
def test_each_metric_fires_once_resolves_after_a_whole_window_and_respects_the_cooldown(org, metric):
    threshold, bad, count, good = CASES[metric]
    rule = alert_rule_create(org=org, name=f"Too many {metric}", metric=metric, comparator="gt", threshold=threshold,
                             window_minutes=15, cooldown_minutes=60, min_calls=1, channels=[])
    for _ in range(count):
        bad(org, T0 - 5 * MINUTE)

    assert evaluate(now=T0)["fired"] == 1
    (alert,) = alerts_of(rule)
    assert (alert.metric, alert.resolved_at, alert.threshold, alert.window_minutes) == (metric, None, threshold, 15)
    assert alert.value > threshold

    assert evaluate(now=T0 + MINUTE)["fired"] == 0  # still breaching: the open alert stands, no second one
    assert len(alerts_of(rule)) == 1

    # Out of the window at T0+11 (the bad rows are at T0-5): back within the threshold, but not yet for a window.
    if good is not None:  # a rate needs calls (attempts) in the window to be judged at all
        for when in (T0 + 10 * MINUTE, T0 + 20 * MINUTE):
            for _ in range(count * 2):
                good(org, when)
    assert evaluate(now=T0 + 11 * MINUTE)["resolved"] == 0
    assert evaluate(now=T0 + 25 * MINUTE)["resolved"] == 0
    assert evaluate(now=T0 + 26 * MINUTE)["resolved"] == 1
    alert.refresh_from_db()
    assert alert.resolved_at == T0 + 26 * MINUTE
    assert evaluate(now=T0 + 27 * MINUTE)["resolved"] == 0

    # Breaching again within the cooldown (60 minutes from T0): nothing fires; after it, a second alert.
    for _ in range(count):
        bad(org, T0 + 28 * MINUTE)
    assert evaluate(now=T0 + 30 * MINUTE)["fired"] == 0
    assert len(alerts_of(rule)) == 1
    for _ in range(count * 10):  # a rate must breach over the good rows of T0+50 too
        bad(org, T0 + 58 * MINUTE)
    assert evaluate(now=T0 + 61 * MINUTE)["fired"] == 1
    assert [a.triggered_at for a in alerts_of(rule)] == [T0, T0 + 61 * MINUTE]


def test_lt_fires_when_the_metric_falls_below_the_threshold(org):
    rule = alert_rule_create(org=org, name="Quiet", metric="calls", comparator="lt", threshold=2, window_minutes=15,
                             channels=[])
    call_at(org, T0 - MINUTE)
    assert evaluate(now=T0)["fired"] == 1
    assert alerts_of(rule)[0].value == 1.0


def test_a_rate_is_not_judged_on_fewer_calls_than_min_calls(org):
    rule = alert_rule_create(org=org, name="Unanswered", metric="unanswered_question_rate", comparator="gt",
                             threshold=0.5, window_minutes=15, min_calls=5, channels=[])
    for _ in range(4):
        call_at(org, T0 - MINUTE, unanswered=1)
    assert evaluate(now=T0)["fired"] == 0
    call_at(org, T0 - MINUTE, unanswered=1)
    assert evaluate(now=T0)["fired"] == 1
    assert alerts_of(rule)[0].value == 1.0


def test_a_disabled_rule_is_not_evaluated(org):
    rule = alert_rule_create(org=org, name="Off", metric="calls", comparator="lt", threshold=5, window_minutes=15,
                             enabled=False, channels=[])
    assert evaluate(now=T0)["rules"] == 0
    assert alerts_of(rule) == []


def test_a_rule_per_location_fires_for_the_location_that_breaches_only(org, main_st, harbor):
    rule = alert_rule_create(org=org, name="Busy", metric="calls", comparator="gt", threshold=1, window_minutes=15,
                             location_ids=[main_st.pk, harbor.pk], channels=[])
    call_at(org, T0 - MINUTE, location=main_st)
    call_at(org, T0 - MINUTE, location=main_st)
    call_at(org, T0 - MINUTE, location=harbor)
    assert evaluate(now=T0)["fired"] == 1
    assert [a.location_id for a in alerts_of(rule)] == [main_st.pk]


def test_email_goes_to_the_alert_recipients_of_its_location_and_to_the_whole_organizations(org, admin, main_st,
                                                                                        harbor):
    recipient_create(org=org, by=admin, email="owner@acme.example", alerts=True)
    recipient_create(org=org, by=admin, email="main-manager@acme.example", alerts=True, location_ids=[main_st.pk])
    recipient_create(org=org, by=admin, email="harbor-manager@acme.example", alerts=True, location_ids=[harbor.pk])
    recipient_create(org=org, by=admin, email="desk@acme.example", messages=True)
    alert_rule_create(org=org, name="Busy", metric="calls", comparator="gt", threshold=1, window_minutes=15,
                      location_ids=[main_st.pk], channels=["email"])
    alert_rule_create(org=org, name="Busy overall", metric="calls", comparator="gt", threshold=1, window_minutes=15,
                      channels=["email"])
    call_at(org, T0 - MINUTE, location=main_st)
    call_at(org, T0 - MINUTE, location=main_st)
    assert evaluate(now=T0)["fired"] == 2
    mails = {(m.to_email, m.subject) for m in EmailNotification.objects.filter(kind="alerts")}
    assert mails == {
        ("owner@acme.example", "Alert: Busy (Main St)"),
        ("main-manager@acme.example", "Alert: Busy (Main St)"),
        ("owner@acme.example", "Alert: Busy overall (the whole organization)"),
    }


def test_webhook_channel_emits_alert_triggered_and_resolved_to_the_subscriptions_that_choose_them(org):
    subscription, _ = subscription_create(org=org, url="https://hooks.example.com/ops",
                                          events=["alert.triggered", "alert.resolved"])
    rule = alert_rule_create(org=org, name="Quiet", metric="calls", comparator="lt", threshold=1, window_minutes=15,
                             channels=["webhook"])
    evaluate(now=T0)
    (alert,) = alerts_of(rule)
    (event,) = Event.objects.filter(type="alert.triggered")
    assert event.data == {
        "alert_id": str(alert.pk), "rule_id": str(rule.pk), "rule_name": "Quiet", "location_id": None,
        "metric": "calls", "comparator": "lt", "value": 0.0, "threshold": 1.0, "window_minutes": 15,
        "triggered_at": "2026-11-25T15:00:00.000Z", "resolved_at": None,
        "alert_url": f"http://127.0.0.1:8000/alerts/{alert.pk}/",
    }
    call_at(org, T0 + MINUTE)
    call_at(org, T0 + 10 * MINUTE)
    evaluate(now=T0 + 2 * MINUTE)
    evaluate(now=T0 + 17 * MINUTE)
    (resolved,) = Event.objects.filter(type="alert.resolved")
    assert resolved.data["resolved_at"] == "2026-11-25T15:17:00.000Z"
    assert set(Delivery.objects.filter(subscription=subscription).values_list("event__type", flat=True)) == {
        "alert.triggered", "alert.resolved"}
    assert not EmailNotification.objects.filter(kind="alerts").exists()


def test_an_org_wide_rule_during_open_hours_waits_for_a_location_to_open(org, main_st):
    main_st_hours = [{"day": day, "start": "09:00", "end": "17:00"} for day in ("mon", "tue", "wed", "thu", "fri")]
    from knowledge.services import location_update  # noqa: PLC0415 - local to this test

    location_update(location=main_st, weekly_hours=main_st_hours)
    rule = alert_rule_create(org=org, name="Quiet", metric="calls", comparator="lt", threshold=1, window_minutes=15,
                             only_during_open_hours=True, channels=[])
    night = datetime.fromisoformat("2026-11-25T04:00:00+00:00")  # 23:00 in New York: closed
    assert evaluate(now=night)["fired"] == 0
    assert evaluate(now=T0)["fired"] == 1  # 10:00 in New York
    assert len(alerts_of(rule)) == 1


def test_two_evaluations_of_one_minute_open_one_alert(org):
    rule = alert_rule_create(org=org, name="Quiet", metric="calls", comparator="lt", threshold=1, window_minutes=15,
                             channels=[])
    evaluate(now=T0)
    evaluate(now=T0)
    assert len(alerts_of(rule)) == 1


def test_another_organizations_calls_do_not_count(org, other_org):
    rule = alert_rule_create(org=org, name="Busy", metric="calls", comparator="gt", threshold=0, window_minutes=15,
                             channels=[])
    call_at(other_org, T0 - MINUTE)
    assert evaluate(now=T0)["fired"] == 0
    assert alerts_of(rule) == []
    assert Subscription.objects.count() == 0
    assert timedelta(0) == timedelta(0)
