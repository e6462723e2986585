"""The overview: today's and this week's calls, what waits on the team, the chart, the average score."""

from datetime import timedelta

import pytest
from django.utils import timezone

from calls.models import Call, CallbackRequest, Message
from calls.services.inbox import callback_mark_handled
from calls.services.orders import order_set_status
from tests.support.dashboard_calls import bulk_calls, count_queries, simulate  # noqa: F401

pytestmark = pytest.mark.django_db


def test_anonymous_goes_to_log_in(client):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize("who", ["admin_client", "member_client"])
def test_members_and_admins_see_the_numbers_of_their_org(request, who, org):
    client = request.getfixturevalue(who)
    calls = bulk_calls(org, 12)  # every 7 hours back from now: some today, most of them this week
    response = client.get("/")
    assert response.status_code == 200
    counts = response.context["counts"]
    today_start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    week_start = today_start - timedelta(days=today_start.weekday())
    assert counts["totals"]["today"] == sum(c.started_at >= today_start for c in calls)
    assert counts["totals"]["week"] == sum(c.started_at >= week_start for c in calls)
    assert response.context["orders_waiting"] == 4  # calls 0, 3, 6, 9
    assert counts["waiting"] == {"callbacks": 4, "messages": 4, "escalations": 4}
    scored = [c.score for c in calls if c.scorable]
    assert response.context["chart"]["average_score"] == round(sum(scored) / len(scored))
    body = response.content.decode()
    assert 'data-testid="calls-chart"' in body and body.count('data-testid="chart-bar"') >= 1
    assert "<svg" in body and "Calls per day by outcome" in body


def test_what_is_done_stops_waiting(admin_client, admin, org):
    calls = bulk_calls(org, 4)
    order_call = calls[0]
    order_set_status(call=order_call, status="fulfilled", changed_by=str(admin.pk), source="team_via_dashboard")
    callback_mark_handled(org=org, callback_id=CallbackRequest.objects.get(call=order_call).pk, by=admin)
    response = admin_client.get("/")
    assert response.context["orders_waiting"] == 1
    assert response.context["counts"]["waiting"]["callbacks"] == 1
    assert response.context["counts"]["waiting"]["messages"] == Message.objects.for_org(org).count() == 2


def test_another_orgs_calls_never_show(outsider_client, org):
    bulk_calls(org, 6)
    response = outsider_client.get("/")
    assert response.status_code == 200
    assert response.context["counts"]["totals"] == {"today": 0, "week": 0}
    assert response.context["orders_waiting"] == 0
    assert response.context["chart"]["total"] == 0
    assert 'data-testid="chart-empty"' in response.content.decode()


def test_the_chart_toggles_between_14_and_30_days(admin_client, org):
    bulk_calls(org, 3, start=timezone.now() - timedelta(days=20))  # only in the 30-day window
    fourteen = admin_client.get("/")
    assert fourteen.context["days"] == 14 and fourteen.context["chart"]["total"] == 0
    thirty = admin_client.get("/?days=30")
    assert thirty.context["days"] == 30 and thirty.context["chart"]["total"] == 3
    assert len(thirty.context["chart"]["table"]) == 30
    assert 'aria-current="true" data-testid="chart-days-30"' in thirty.content.decode()


@pytest.mark.parametrize("value", ["7", "abc", "30.5", "-1", "9" * 30])
def test_a_bad_range_is_an_inline_error_not_a_500(admin_client, org, value):
    bulk_calls(org, 2)
    response = admin_client.get(f"/?days={value}")
    assert response.status_code == 200
    assert response.context["days"] == 14
    assert 'data-testid="error-days"' in response.content.decode()


def test_simulated_calls_fill_the_overview(admin_client, org, media_in_tmp):
    simulate(org, "mixed", count=8, seed=3)
    response = admin_client.get("/?days=30")
    assert response.context["chart"]["total"] == Call.objects.for_org(org).count() >= 8  # some scenarios make two


def test_overview_queries_do_not_grow_with_the_data(admin_client, org):
    bulk_calls(org, 2)
    small = count_queries(admin_client, "/?days=30")
    bulk_calls(org, 60)
    large = count_queries(admin_client, "/?days=30")
    assert small == large, (small, large)
    assert large <= 12
