"""The recipient list's services: admins only, a team member of the org xor a valid address, at least one kind,
no duplicates; every refusal writes nothing. And the webhook problem e-mails: admins plus chosen recipients."""

from unittest import mock

import pytest
from django.core import mail

from core.errors import Conflict, ValidationFailed
from knowledge.services import team_member_create
from notifications.models import NotificationRecipient
from notifications.services import notify_webhook_disabled, recipient_create, recipient_delete, recipient_update
from orgs.errors import NotAnAdmin
from tests.support.mail import send_pending
from webhooks.services import subscription_create

pytestmark = pytest.mark.django_db


def field_errors(exc) -> dict:
    return exc.value.details["fieldErrors"]


def test_an_admin_adds_a_team_member_or_an_address(org, admin, maria):
    by_member = recipient_create(org=org, by=admin, team_member=maria.id, callback_requests=True)
    by_address = recipient_create(org=org, by=admin, email="Desk@ACME.example", messages=True, escalations=True)
    assert (by_member.address, by_member.kinds) == ("maria@acme.example", ["callback_requests"])
    assert (by_address.address, by_address.kinds) == ("Desk@acme.example", ["messages", "escalations"])


def test_members_cannot_change_the_list(org, admin, member, maria):
    recipient = recipient_create(org=org, by=admin, email="desk@acme.example", messages=True)
    with pytest.raises(NotAnAdmin):
        recipient_create(org=org, by=member, email="sneaky@evil.example", messages=True)
    with pytest.raises(NotAnAdmin):
        recipient_update(recipient=recipient, by=member, email="sneaky@evil.example")
    with pytest.raises(NotAnAdmin):
        recipient_delete(recipient=recipient, by=member)
    assert list(NotificationRecipient.objects.values_list("email", "messages")) == [("desk@acme.example", True)]


def test_an_admin_of_another_org_cannot_change_ours(org, admin, other_org):
    from tests.factories import MembershipFactory

    outsider = MembershipFactory(organization=other_org, role="admin").user
    recipient = recipient_create(org=org, by=admin, email="desk@acme.example", messages=True)
    with pytest.raises(NotAnAdmin):
        recipient_create(org=org, by=outsider, email="x@evil.example", messages=True)
    with pytest.raises(NotAnAdmin):
        recipient_delete(recipient=recipient, by=outsider)
    assert NotificationRecipient.objects.count() == 1


@pytest.mark.parametrize("email", ["not-an-email", "a@b", "two@@example.com", "x" * 250 + "@example.com",
                                   "line\nbreak@example.com"])
def test_an_invalid_address_is_refused(org, admin, email):
    with pytest.raises(ValidationFailed) as exc:
        recipient_create(org=org, by=admin, email=email, messages=True)
    assert "email" in field_errors(exc)
    assert not NotificationRecipient.objects.exists()


def test_another_orgs_team_member_is_refused(org, admin, other_org):
    theirs = team_member_create(org=other_org, name="Theirs", email="theirs@other.example")
    with pytest.raises(ValidationFailed) as exc:
        recipient_create(org=org, by=admin, team_member=theirs.id, messages=True)
    assert "team_member" in field_errors(exc)
    assert not NotificationRecipient.objects.exists()


def test_a_team_member_without_an_email_is_refused(org, admin):
    no_email = team_member_create(org=org, name="Pat")
    with pytest.raises(ValidationFailed) as exc:
        recipient_create(org=org, by=admin, team_member=no_email, messages=True)
    assert "no e-mail address" in field_errors(exc)["team_member"][0]


@pytest.mark.parametrize("case", ["no target", "both targets", "no kind"])
def test_exactly_one_target_and_at_least_one_kind(org, admin, maria, case):
    values = {
        "no target": {"messages": True},
        "both targets": {"email": "a@acme.example", "team_member": maria, "messages": True},
        "no kind": {"email": "a@acme.example"},
    }[case]
    with pytest.raises(ValidationFailed) as exc:
        recipient_create(org=org, by=admin, **values)
    assert exc.value.details["formErrors"]
    assert not NotificationRecipient.objects.exists()


def test_duplicates_are_a_conflict(org, admin, maria):
    recipient_create(org=org, by=admin, email="desk@acme.example", messages=True)
    recipient_create(org=org, by=admin, team_member=maria, messages=True)
    with pytest.raises(Conflict) as exc:
        recipient_create(org=org, by=admin, email="DESK@acme.example", escalations=True)
    assert exc.value.field == "email"
    with pytest.raises(Conflict) as exc:
        recipient_create(org=org, by=admin, team_member=maria, escalations=True)
    assert exc.value.field == "team_member"
    assert NotificationRecipient.objects.count() == 2


def test_the_same_address_may_be_listed_by_two_orgs(org, admin, other_org_recipient):
    recipient_create(org=org, by=admin, email=other_org_recipient.email, messages=True)
    assert NotificationRecipient.objects.count() == 2


def test_update_changes_kinds_and_target_and_delete_removes(org, admin, maria):
    recipient = recipient_create(org=org, by=admin, email="desk@acme.example", messages=True)
    recipient = recipient_update(recipient=recipient, by=admin, messages=False, escalations=True)
    assert recipient.kinds == ["escalations"] and recipient.email == "desk@acme.example"
    recipient = recipient_update(recipient=recipient, by=admin, team_member=maria, email=None)
    assert (recipient.team_member_id, recipient.email, recipient.kinds) == (maria.id, None, ["escalations"])
    with pytest.raises(ValidationFailed):
        recipient_update(recipient=recipient, by=admin, escalations=False)
    recipient.refresh_from_db()
    assert recipient.kinds == ["escalations"]
    recipient_delete(recipient=recipient, by=admin)
    assert not NotificationRecipient.objects.exists()


def test_deleting_the_team_member_removes_the_recipient(org, admin, maria):
    from knowledge.services import team_member_delete

    recipient_create(org=org, by=admin, team_member=maria, messages=True)
    team_member_delete(member=maria)
    assert not NotificationRecipient.objects.exists()


# --- webhook problems ---------------------------------------------------------------------------------------


def test_webhook_problems_go_to_admins_and_chosen_recipients_once_each(org, admin, member, maria,
                                                                        other_org_recipient):
    recipient_create(org=org, by=admin, team_member=maria, webhook_problems=True)
    recipient_create(org=org, by=admin, email=admin.email.upper(), webhook_problems=True)  # the admin again
    recipient_create(org=org, by=admin, email="desk@acme.example", messages=True)  # did not choose this kind
    with mock.patch("webhooks.services.validate_url", return_value=[]):
        subscription, _ = subscription_create(org=org, url="https://hooks.example.com/x", events=["call.ended"])
    notify_webhook_disabled(subscription=subscription, reason="The endpoint answered 410 Gone.")
    send_pending()
    assert sorted(address for m in mail.outbox for address in m.to) == sorted([admin.email, "maria@acme.example"])
    assert all(m.subject == "Webhook endpoint disabled" and "410 Gone" in m.body for m in mail.outbox)
