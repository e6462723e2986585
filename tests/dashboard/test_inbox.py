"""The inbox: callbacks, messages and escalations with their calls; any member marks one handled, once."""

import pytest
from django.test import Client

from calls.models import CallbackRequest, Escalation, Message
from tests.support.dashboard_calls import bulk_calls, count_queries, simulate  # noqa: F401

pytestmark = pytest.mark.django_db

KINDS = {"callback": CallbackRequest, "message": Message, "escalation": Escalation}


def test_anonymous_goes_to_log_in(client, org):
    bulk_calls(org, 1)
    assert client.get("/inbox/")["Location"].startswith("/login/")
    item = CallbackRequest.objects.get()
    response = client.post(f"/inbox/callback/{item.pk}/handled")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    item.refresh_from_db()
    assert item.handled_at is None


@pytest.mark.parametrize("who", ["admin_client", "member_client"])
def test_the_inbox_lists_each_item_with_its_call(request, who, org, media_in_tmp):
    client = request.getfixturevalue(who)
    simulate(org, "callback", seed=1)
    simulate(org, "message", seed=2)
    simulate(org, "escalation", seed=3)
    response = client.get("/inbox/")
    assert response.status_code == 200
    body = response.content.decode()
    for model in KINDS.values():
        item = model.objects.for_org(org).get()
        assert f'data-item-id="{item.pk}"' in body
        assert f'href="/calls/{item.call_id}"' in body
    assert CallbackRequest.objects.get().reason in body
    assert Message.objects.get().message in body
    assert body.count('data-testid="mark-handled"') == 3


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("who, user", [("admin_client", "admin"), ("member_client", "member")])
def test_any_member_marks_an_item_handled_once(request, org, kind, who, user):
    client, user = request.getfixturevalue(who), request.getfixturevalue(user)
    bulk_calls(org, 1)
    item = KINDS[kind].objects.for_org(org).get()
    response = client.post(f"/inbox/{kind}/{item.pk}/handled")
    assert response.status_code == 302 and response["Location"] == f"/inbox/#{kind}s"
    item.refresh_from_db()
    first = item.handled_at
    assert first is not None and item.handled_by == user
    again = client.post(f"/inbox/{kind}/{item.pk}/handled", follow=True)
    assert "already handled" in again.content.decode()
    item.refresh_from_db()
    assert item.handled_at == first  # the first handler stays on record
    waiting = client.get("/inbox/")
    assert f'data-item-id="{item.pk}"' not in waiting.content.decode()
    handled = client.get("/inbox/?show=handled").content.decode()
    assert f'data-item-id="{item.pk}"' in handled and user.email in handled


def test_another_orgs_item_is_a_plain_404(outsider_client, org):
    bulk_calls(org, 1)
    for kind, model in KINDS.items():
        item = model.objects.for_org(org).get()
        assert outsider_client.post(f"/inbox/{kind}/{item.pk}/handled").status_code == 404
        item.refresh_from_db()
        assert item.handled_at is None
    assert "data-item-id" not in outsider_client.get("/inbox/").content.decode()


@pytest.mark.parametrize("path", [
    "/inbox/bogus/00000000-0000-0000-0000-000000000000/handled",
    "/inbox/callback/00000000-0000-0000-0000-000000000000/handled",
    "/inbox/callback/not-a-uuid/handled",
])
def test_unknown_kinds_and_ids_are_404(admin_client, org, path):
    bulk_calls(org, 1)
    assert admin_client.post(path).status_code == 404
    assert not CallbackRequest.objects.filter(handled_at__isnull=False).exists()


def test_marking_handled_is_post_only_and_needs_csrf(admin, org):
    bulk_calls(org, 1)
    item = Message.objects.get()
    client = Client(enforce_csrf_checks=True)
    client.login(username=admin.username, password="correct-horse-battery")
    assert client.get(f"/inbox/message/{item.pk}/handled").status_code == 405
    assert client.post(f"/inbox/message/{item.pk}/handled").status_code == 403
    item.refresh_from_db()
    assert item.handled_at is None


def test_next_goes_back_only_to_our_own_pages(admin_client, org):
    bulk_calls(org, 1)
    item = Message.objects.get()
    response = admin_client.post(f"/inbox/message/{item.pk}/handled", {"next": "https://evil.example/"})
    assert response["Location"] == "/inbox/#messages"
    item = Escalation.objects.get()
    response = admin_client.post(f"/inbox/escalation/{item.pk}/handled", {"next": f"/calls/{item.call_id}"})
    assert response["Location"] == f"/calls/{item.call_id}"


def test_a_bad_filter_is_an_inline_error(admin_client, org):
    bulk_calls(org, 1)
    response = admin_client.get("/inbox/?show=everything")
    assert response.status_code == 200
    assert 'data-testid="error-show"' in response.content.decode()
    assert response.context["show"] == "open"


def test_inbox_queries_do_not_grow_with_the_data(admin_client, org):
    bulk_calls(org, 3)
    small = count_queries(admin_client, "/inbox/")
    bulk_calls(org, 60)
    large = count_queries(admin_client, "/inbox/?show=all")
    assert small == large, (small, large)
