"""The calls list and the call page: tenancy, filters, the conversation with its evidence, the recording, and
the order status control (the same service as the API, `canceled_by: team_via_dashboard`)."""

import html
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from calls import recordings
from calls.models import Call, Order
from core import links
from orgs.models import Location
from tests.factories import OrganizationFactory
from tests.support.dashboard_calls import bulk_calls, count_queries, simulate  # noqa: F401
from webhooks.models import Event

pytestmark = pytest.mark.django_db

STATUS_EVENT = "call_order.status_changed"


@pytest.fixture
def order_call(org, media_in_tmp):
    """A simulated phone order (runtime API: start, tool events, completion, recording upload)."""
    call = simulate(org, "order", seed=7)[0]
    assert call.order.status == "new" and call.recording
    return call


def unmasked(response) -> str:
    """The page without its CSRF token, which Django masks differently on every response."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def status_events(org):
    return [e.data for e in Event.objects.for_org(org).filter(type=STATUS_EVENT).order_by("created_at")]


# --- access -------------------------------------------------------------------------------------------------


def test_the_call_page_is_the_call_url_of_call_ended(order_call, settings):
    assert links.call_url(order_call.pk) == f"{settings.DASHBOARD_URL}/calls/{order_call.pk}"
    assert f"/calls/{order_call.pk}" == links.call_url(order_call.pk).removeprefix(settings.DASHBOARD_URL)


@pytest.mark.parametrize("path", ["/calls/", "/calls/{id}"])
def test_anonymous_goes_to_log_in(client, order_call, path):
    response = client.get(path.format(id=order_call.pk))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize("who", ["admin_client", "member_client"])
def test_admins_and_members_see_the_list_and_the_call(request, who, order_call):
    client = request.getfixturevalue(who)
    listing = client.get("/calls/")
    assert listing.status_code == 200
    assert [c.pk for c in listing.context["calls"]] == [order_call.pk]
    page = client.get(f"/calls/{order_call.pk}")
    assert page.status_code == 200
    body = page.content.decode()
    assert order_call.summary in body
    assert f"Order #{order_call.order.call_order_number}" in body
    assert 'data-testid="order-status-canceled"' in body  # members run the line: they get the control too


def test_another_orgs_call_is_a_plain_404(outsider_client, order_call):
    missing = outsider_client.get("/calls/00000000-0000-0000-0000-000000000000")
    hidden = outsider_client.get(f"/calls/{order_call.pk}")
    assert hidden.status_code == missing.status_code == 404
    assert unmasked(hidden) == unmasked(missing)
    assert list(outsider_client.get("/calls/").context["calls"]) == []
    response = outsider_client.post(f"/calls/{order_call.pk}/order-status", {"status": "canceled"})
    assert response.status_code == 404
    order_call.order.refresh_from_db()
    assert order_call.order.status == "new" and status_events(order_call.organization) == []


# --- the list -----------------------------------------------------------------------------------------------


def test_unscorable_calls_are_listed_and_marked(admin_client, org):
    calls = bulk_calls(org, 5)  # the fifth is a robocall
    response = admin_client.get("/calls/")
    assert len(response.context["calls"]) == 5
    body = response.content.decode()
    assert body.count('data-testid="unscorable"') == 1
    robocall = next(c for c in calls if not c.scorable)
    assert re.search(rf'data-call-id="{robocall.pk}" class="is-muted"', body)


def test_filters_narrow_the_list(admin_client, org):
    calls = bulk_calls(org, 10)
    here = Location.objects.create(organization=org, name="Downtown", address="1 Main St", timezone="UTC",
                                   phone_number="+14155550100")
    Call.objects.filter(pk=calls[1].pk).update(location=here, disposition="escalated")

    def ids(query):
        response = admin_client.get(f"/calls/?{query}")
        assert response.status_code == 200
        assert not response.context["form"].errors, response.context["form"].errors
        return {c.pk for c in response.context["calls"]}

    assert ids("outcome=order") == {c.pk for c in calls if c.outcome == "order"}
    assert ids("scorable=no") == {c.pk for c in calls if not c.scorable}
    assert ids("scorable=yes") == {c.pk for c in calls if c.scorable}
    assert ids(f"location={here.pk}") == {calls[1].pk}
    assert ids("disposition=escalated") == {calls[1].pk}
    today = timezone.localdate()
    assert ids(f"since={today}&until={today}") == {
        c.pk for c in calls if timezone.localtime(c.started_at).date() == today
    }
    old = today - timedelta(days=2)
    assert ids(f"until={old}") == {c.pk for c in calls if timezone.localtime(c.started_at).date() <= old}


@pytest.mark.parametrize("query, field", [
    ("since=yesterday", "since"),
    ("until=2026-13-40", "until"),
    ("since=2026-05-02&until=2026-05-01", "until"),
    ("outcome=not-an-outcome", "outcome"),
    ("disposition=hung_up", "disposition"),
    ("scorable=maybe", "scorable"),
    ("location=not-a-uuid", "location"),
    ("location=00000000-0000-0000-0000-000000000000", "location"),
])
def test_bad_filters_are_inline_errors_not_500s(admin_client, org, query, field):
    bulk_calls(org, 3)
    response = admin_client.get(f"/calls/?{query}")
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert f'data-testid="error-{field}"' in response.content.decode()
    assert response.context["calls"] == []  # never a silently wider list


def test_another_orgs_location_is_not_a_filter(admin_client, org):
    bulk_calls(org, 2)
    theirs = Location.objects.create(organization=OrganizationFactory(), name="Theirs", address="x", timezone="UTC",
                                     phone_number="+14155550101")
    response = admin_client.get(f"/calls/?location={theirs.pk}")
    assert "location" in response.context["form"].errors


def test_the_list_pages_newest_first(admin_client, org):
    calls = bulk_calls(org, 30)
    first = admin_client.get("/calls/?outcome=&page=1")
    second = admin_client.get("/calls/?page=2")
    assert [c.pk for c in first.context["calls"]] == [c.pk for c in calls[:25]]
    assert [c.pk for c in second.context["calls"]] == [c.pk for c in calls[25:]]
    assert "page=2" in first.content.decode()
    assert admin_client.get("/calls/?page=banana").status_code == 200


def test_list_queries_do_not_grow_with_the_data(admin_client, org):
    bulk_calls(org, 3)
    small = count_queries(admin_client, "/calls/")
    bulk_calls(org, 60)
    large = count_queries(admin_client, "/calls/")
    filtered = count_queries(admin_client, "/calls/?scorable=yes&outcome=order")
    assert small == large == filtered, (small, large, filtered)


# --- the call page ------------------------------------------------------------------------------------------


def test_the_call_page_shows_conversation_evidence_checks_trail_contact_and_order(admin_client, order_call):
    body = admin_client.get(f"/calls/{order_call.pk}").content.decode()
    for turn in order_call.transcript:
        assert f"turn--{turn['speaker']}" in body
    evidence = [q for check in order_call.quality_checks for q in check["evidence"]]
    assert evidence and body.count("<mark") >= 1
    marked = re.findall(r"<mark[^>]*>(.*?)</mark>", body)
    assert {m.lower() for m in marked} & {q.lower() for q in evidence}
    for check in order_call.quality_checks:
        assert html.escape(check["name"]) in body
    for step in order_call.trail:
        assert step in body
    assert order_call.contact.phone_number in body
    for item in order_call.order.items:
        assert item["name"] in body
    total = order_call.order.total_cents
    assert f"${total // 100:,}.{total % 100:02d}" in body


def test_the_recording_plays_from_a_freshly_minted_url(admin_client, order_call):
    first = admin_client.get(f"/calls/{order_call.pk}")
    url = first.context["playback"]["url"]
    assert f'<audio controls preload="metadata" src="{url}"' in first.content.decode()
    audio = Client().get(url)  # the token is the capability
    assert audio.status_code == 200 and audio["Content-Type"] == "audio/wav"
    assert b"".join(audio.streaming_content)[:4] == b"RIFF"


def test_the_player_stays_on_the_dashboards_origin_whatever_base_url_says(admin_client, order_call, settings):
    # The page's CSP allows media from 'self' only: an absolute BASE_URL on another origin (the API's host, or
    # `make run` on a PORT other than 8000) left the player blocked and silent.
    settings.BASE_URL = "https://api.example.com"
    page = admin_client.get(f"/calls/{order_call.pk}")
    url = page.context["playback"]["url"]
    assert url.startswith("/recordings/?token=")
    assert "media-src 'self';" in page["Content-Security-Policy"]
    assert Client().get(url).status_code == 200
    # The API's URL is for clients anywhere, so it stays absolute.
    assert recordings.playback(order_call.recording)["url"].startswith("https://api.example.com/recordings/?token=")


def test_transcript_text_is_escaped_inside_the_marks(admin_client, org):
    call = bulk_calls(org, 1)[0]
    call.transcript = [{"speaker": "caller", "text": "I said <script>alert(1)</script> twice", "offset_seconds": 1}]
    call.quality_checks = [{"name": "Listens", "verdict": "pass", "evidence": ["<script>alert(1)</script>"],
                            "gap_type": None, "verification": "verified"}]
    call.save()
    body = admin_client.get(f"/calls/{call.pk}").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert '<mark title="Evidence for check 1" data-check="1">&lt;script&gt;alert(1)&lt;/script&gt;</mark>' in body


# --- the order status control -------------------------------------------------------------------------------


@pytest.mark.parametrize("who, user", [("admin_client", "admin"), ("member_client", "member")])
def test_any_member_changes_the_status_through_the_service(request, who, user, order_call):
    client, user = request.getfixturevalue(who), request.getfixturevalue(user)
    response = client.post(f"/calls/{order_call.pk}/order-status", {"status": "in_progress"})
    assert response.status_code == 302 and response["Location"] == f"/calls/{order_call.pk}"
    response = client.post(f"/calls/{order_call.pk}/order-status", {"status": "canceled"})
    order = Order.objects.get(pk=order_call.order.pk)
    assert order.status == "canceled" and order.canceled_by == "team_via_dashboard"
    changes = status_events(order_call.organization)
    assert [(e["previous_status"], e["new_status"], e["canceled_by"], e["changed_by"]) for e in changes] == [
        ("new", "in_progress", None, str(user.pk)),
        ("in_progress", "canceled", "team_via_dashboard", str(user.pk)),
    ]
    page = client.get(response["Location"]).content.decode()
    assert "is now canceled" in page and 'data-testid="order-status-form"' not in page


def test_an_invalid_transition_is_an_inline_error_and_changes_nothing(admin_client, admin, order_call):
    admin_client.post(f"/calls/{order_call.pk}/order-status", {"status": "fulfilled"})
    before = status_events(order_call.organization)
    response = admin_client.post(f"/calls/{order_call.pk}/order-status", {"status": "in_progress"})
    assert response.status_code == 409
    assert 'data-testid="error-status"' in response.content.decode()
    assert "cannot go from fulfilled to in_progress" in response.content.decode()
    assert Order.objects.get(pk=order_call.order.pk).status == "fulfilled"
    assert status_events(order_call.organization) == before


@pytest.mark.parametrize("data", [{"status": "bogus"}, {}, {"status": ""}, {"status": "x" * 5000}])
def test_a_bad_status_is_rejected_without_writing(admin_client, order_call, data):
    response = admin_client.post(f"/calls/{order_call.pk}/order-status", data)
    assert response.status_code == 400
    assert 'data-testid="error-status"' in response.content.decode()
    assert Order.objects.get(pk=order_call.order.pk).status == "new"
    assert status_events(order_call.organization) == []


def test_the_same_status_again_is_a_no_op(admin_client, order_call):
    response = admin_client.post(f"/calls/{order_call.pk}/order-status", {"status": "new"}, follow=True)
    assert "already new" in response.content.decode()
    assert status_events(order_call.organization) == []


def test_a_call_without_an_order_has_no_control(admin_client, org):
    call = next(c for c in bulk_calls(org, 2) if c.outcome != "order")
    assert 'data-testid="order-status-form"' not in admin_client.get(f"/calls/{call.pk}").content.decode()
    response = admin_client.post(f"/calls/{call.pk}/order-status", {"status": "canceled"})
    assert response.status_code == 404


def test_the_status_form_needs_a_csrf_token(admin, order_call):
    client = Client(enforce_csrf_checks=True)
    client.login(username=admin.username, password="correct-horse-battery")
    response = client.post(f"/calls/{order_call.pk}/order-status", {"status": "canceled"})
    assert response.status_code == 403
    assert Order.objects.get(pk=order_call.order.pk).status == "new"
    page = client.get(f"/calls/{order_call.pk}").content.decode()
    assert 'name="csrfmiddlewaretoken"' in page


def test_anonymous_cannot_change_a_status(client, order_call):
    response = client.post(f"/calls/{order_call.pk}/order-status", {"status": "canceled"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert Order.objects.get(pk=order_call.order.pk).status == "new"
