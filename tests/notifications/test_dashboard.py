"""Settings → Notifications: members read; admins add (a team member or a typed address, with kinds), edit and
remove; a member's POST is 403 and another org's id is the same 404 as a missing one, with nothing written."""

import uuid

import pytest

from knowledge.services import team_member_create
from notifications.models import NotificationRecipient
from notifications.services import recipient_create

pytestmark = pytest.mark.django_db

LIST = "/settings/notifications/"


@pytest.fixture
def desk(org, admin):
    return recipient_create(org=org, by=admin, email="desk@acme.example", messages=True, escalations=True)


def snapshot():
    return sorted(NotificationRecipient.objects.values_list(
        "organization_id", "team_member_id", "email", "callback_requests", "messages", "escalations",
        "webhook_problems",
    ), key=str)


def test_anonymous_visitors_are_sent_to_log_in(client, desk):
    for path in [LIST, f"{LIST}{desk.pk}/edit/", f"{LIST}{desk.pk}/delete/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"] == f"/login/?next={path}", path
    assert client.post(LIST, {"email": "x@evil.example", "messages": "on"}).status_code == 302
    assert NotificationRecipient.objects.count() == 1


def test_members_read_the_list_without_controls(member_client, desk):
    response = member_client.get(LIST)
    body = response.content.decode()
    assert response.status_code == 200
    assert "desk@acme.example" in body and 'data-testid="recipient-form"' not in body
    assert "/edit/" not in body and "/delete/" not in body
    assert 'href="/settings/notifications/"' in body  # the nav item


def test_members_get_403_on_every_write_and_nothing_changes(member_client, desk):
    before = snapshot()
    for method, path, data in [
        ("post", LIST, {"email": "sneaky@evil.example", "messages": "on"}),
        ("get", f"{LIST}{desk.pk}/edit/", None),
        ("post", f"{LIST}{desk.pk}/edit/", {"email": "sneaky@evil.example", "messages": "on"}),
        ("get", f"{LIST}{desk.pk}/delete/", None),
        ("post", f"{LIST}{desk.pk}/delete/", None),
    ]:
        assert getattr(member_client, method)(path, data or {}).status_code == 403, (method, path)
    assert snapshot() == before


def test_another_orgs_recipient_is_the_same_404_as_a_missing_one(outsider_client, desk):
    before = snapshot()
    for suffix in ["edit/", "delete/"]:
        hidden = outsider_client.get(f"{LIST}{desk.pk}/{suffix}")
        missing = outsider_client.get(f"{LIST}{uuid.uuid4()}/{suffix}")
        assert hidden.status_code == missing.status_code == 404
        assert [t.name for t in hidden.templates] == [t.name for t in missing.templates]
        assert "desk@acme.example" not in hidden.content.decode()
        assert outsider_client.post(f"{LIST}{desk.pk}/{suffix}", {"email": "x@evil.example",
                                                                  "messages": "on"}).status_code == 404
    assert "desk@acme.example" not in outsider_client.get(LIST).content.decode()
    assert snapshot() == before


def test_an_admin_adds_a_team_member_and_an_address(admin_client, org, maria):
    response = admin_client.post(LIST, {"team_member": str(maria.pk), "callback_requests": "on"})
    assert response.status_code == 302 and response["Location"] == LIST
    response = admin_client.post(LIST, {"email": "desk@acme.example", "messages": "on", "webhook_problems": "on"})
    assert response.status_code == 302
    assert snapshot() == sorted([
        (org.id, maria.id, None, True, False, False, False),
        (org.id, None, "desk@acme.example", False, True, False, True),
    ], key=str)
    body = admin_client.get(LIST).content.decode()
    assert "Maria Lopez" in body and "desk@acme.example" in body and body.count('data-testid="recipient-row"') == 2


@pytest.mark.parametrize("data, field", [
    ({"email": "not-an-email", "messages": "on"}, "email"),
    ({"email": "desk@acme.example"}, None),  # no kind chosen
    ({"messages": "on"}, None),  # neither a member nor an address
])
def test_bad_input_is_shown_inline_and_nothing_is_written(admin_client, data, field):
    response = admin_client.post(LIST, data)
    body = response.content.decode()
    assert response.status_code == 200
    assert (f'data-testid="error-{field}"' if field else 'data-testid="form-errors"') in body
    assert not NotificationRecipient.objects.exists()


def test_another_orgs_team_member_cannot_be_picked(admin_client, other_org):
    theirs = team_member_create(org=other_org, name="Theirs", email="theirs@other.example")
    body = admin_client.get(LIST).content.decode()
    assert "theirs@other.example" not in body
    response = admin_client.post(LIST, {"team_member": str(theirs.pk), "messages": "on"})
    assert response.status_code == 200 and 'data-testid="error-team_member"' in response.content.decode()
    assert not NotificationRecipient.objects.exists()


def test_a_duplicate_address_is_shown_beside_the_field(admin_client, desk):
    response = admin_client.post(LIST, {"email": "DESK@acme.example", "messages": "on"})
    assert response.status_code == 200 and 'data-testid="error-email"' in response.content.decode()
    assert NotificationRecipient.objects.count() == 1


def test_an_admin_edits_and_removes_a_recipient(admin_client, org, desk, maria):
    edit = f"{LIST}{desk.pk}/edit/"
    page = admin_client.get(edit).content.decode()
    assert 'value="desk@acme.example"' in page
    response = admin_client.post(edit, {"email": "desk@acme.example", "callback_requests": "on"})
    assert response.status_code == 302
    desk.refresh_from_db()
    assert desk.kinds == ["callback_requests"]
    response = admin_client.post(edit, {"email": "bad", "callback_requests": "on"})
    assert response.status_code == 200 and 'data-testid="error-email"' in response.content.decode()
    desk.refresh_from_db()
    assert desk.email == "desk@acme.example"
    assert admin_client.get(f"{LIST}{desk.pk}/delete/").status_code == 200
    assert admin_client.post(f"{LIST}{desk.pk}/delete/").status_code == 302
    assert not NotificationRecipient.objects.exists()
