"""Invitations people consent to: nothing exists until the invitee accepts from the e-mailed link as that address;
the same answer for known and unknown addresses; one use, 7 days, resend and revoke; a per-org hourly limit; the
e-mail through the outbox without the link at rest."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from notifications.models import EmailNotification
from orgs.invitations import INVITATIONS_PER_HOUR
from orgs.models import Invitation, Membership
from tests.support.accounts import NEW_PASSWORD, deliver, link_of
from tests.support.clients import PASSWORD

pytestmark = pytest.mark.django_db

User = get_user_model()
URL = "/settings/members/"
def invite(client, email, role="member"):
    return client.post(URL, {"email": email, "role": role}, follow=True)


def snapshot():
    return User.objects.count(), Membership.objects.count()


def test_inviting_creates_nothing_but_the_invitation_and_an_outbox_mail_without_the_link(admin_client, org):
    before = snapshot()
    response = invite(admin_client, "New.Person@Example.com")
    assert "Invitation sent to new.person@example.com." in response.content.decode()
    assert snapshot() == before
    invitation = Invitation.objects.get(organization=org)
    assert (invitation.email, invitation.role, invitation.accepted_at) == ("new.person@example.com", "member", None)
    row = EmailNotification.objects.get(kind="invitations")
    assert row.to_email == "new.person@example.com"
    assert "/invitations/" not in row.body_text and "/invitations/" not in row.body_html  # no usable link at rest
    [message] = deliver()
    path = link_of(message)
    token = path.rstrip("/").rsplit("/", 1)[1]
    assert token not in invitation.token_digest and org.name in message.subject


def test_the_answer_is_the_same_for_known_and_unknown_addresses(admin_client, org, outsider):
    before = snapshot()
    answers = []
    for email in (outsider.email, "nobody@example.com"):
        response = invite(admin_client, email)
        messages = [str(m) for m in response.context["messages"]]
        answers.append((response.status_code, response.redirect_chain, [m.replace(email, "X") for m in messages]))
    assert answers[0] == answers[1]
    assert answers[0][2] == [
        "Invitation sent to X. They join as member when they accept it (the link works for 7 days)."
    ]
    assert snapshot() == before and not Membership.objects.filter(user=outsider, organization=org).exists()


def test_a_new_person_accepts_by_choosing_a_password(admin_client, org):
    invite(admin_client, "fresh@example.com", role="admin")
    path = link_of(deliver()[0])
    person = Client()
    page = person.get(path)
    assert page.status_code == 200 and "Create account and join" in page.content.decode()
    weak = person.post(path, {"password": "123"})
    assert weak.status_code == 400 and not User.objects.filter(username="fresh@example.com").exists()
    done = person.post(path, {"password": NEW_PASSWORD}, follow=True)
    assert done.redirect_chain == [("/", 302)]
    user = User.objects.get(username="fresh@example.com")
    assert Membership.objects.get(user=user, organization=org).role == "admin"
    assert person.get(URL).status_code == 200
    # One use: the same link again, from anyone, is the invalid page.
    again = Client().get(path)
    assert again.status_code == 404 and 'data-testid="invitation-invalid"' in again.content.decode()


def test_an_existing_account_logs_in_as_the_address_then_joins(admin_client, org, outsider):
    invite(admin_client, outsider.email)
    path = link_of(deliver()[0])
    person = Client()
    page = person.get(path).content.decode()
    assert "Log in to accept" in page
    # A link never sets an existing account's password.
    refused = person.post(path, {"password": NEW_PASSWORD}, follow=True)
    assert "already exists" in refused.content.decode()
    assert User.objects.get(pk=outsider.pk).check_password(PASSWORD)
    assert not Membership.objects.filter(user=outsider, organization=org).exists()
    person.post("/login/", {"username": outsider.email, "password": PASSWORD})
    assert "Join " in person.get(path).content.decode()
    person.post(path)
    assert Membership.objects.get(user=outsider, organization=org).role == "member"


def test_another_signed_in_account_cannot_accept(admin_client, org, member):
    invite(admin_client, "someone.else@example.com")
    path = link_of(deliver()[0])
    intruder = Client()
    intruder.force_login(member)
    assert 'data-testid="wrong-account"' in intruder.get(path).content.decode()
    intruder.post(path)
    assert not Invitation.objects.get(email="someone.else@example.com").accepted_at
    assert Membership.objects.filter(organization=org).count() == 2


def test_expired_revoked_resent_and_forged_links_are_refused_alike(admin_client, org):
    invite(admin_client, "late@example.com")
    first = link_of(deliver()[0])
    invitation = Invitation.objects.get(email="late@example.com")
    admin_client.post(f"/settings/invitations/{invitation.pk}/resend/")
    second = link_of(deliver()[0])
    assert first != second
    forged = second[:-5] + ("0" if second[-5] != "0" else "1") + second[-4:]
    bodies = []
    for path in (first, forged):
        response = Client().get(path)
        assert response.status_code == 404
        bodies.append(response.content)
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expired = Client().get(second)
    assert expired.status_code == 404 and expired.content == bodies[0] == bodies[1]
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() + timedelta(days=1))
    admin_client.post(f"/settings/invitations/{invitation.pk}/revoke/")
    assert Client().get(second).status_code == 404
    assert Client().post(second, {"password": NEW_PASSWORD}).status_code == 404
    assert not User.objects.filter(username="late@example.com").exists()


def test_the_members_page_lists_pending_invitations_for_admins_only(admin_client, member_client):
    invite(admin_client, "pending@example.com")
    assert "pending@example.com" in admin_client.get(URL).content.decode()
    assert "pending@example.com" not in member_client.get(URL).content.decode()


def test_invitations_are_limited_per_org_per_hour(admin_client, org):
    for n in range(INVITATIONS_PER_HOUR):
        assert invite(admin_client, f"p{n}@example.com").status_code == 200
    over = admin_client.post(URL, {"email": "one.too.many@example.com", "role": "member"})
    assert over.status_code == 429 and "20 invitations an hour" in over.content.decode()
    assert not Invitation.objects.filter(email="one.too.many@example.com").exists()


def test_members_cannot_invite_resend_or_revoke(member_client, admin_client):
    invite(admin_client, "x@example.com")
    invitation = Invitation.objects.get(email="x@example.com")
    assert member_client.post(URL, {"email": "y@example.com", "role": "admin"}).status_code == 403
    assert member_client.post(f"/settings/invitations/{invitation.pk}/resend/").status_code == 403
    assert member_client.post(f"/settings/invitations/{invitation.pk}/revoke/").status_code == 403
    assert Invitation.objects.get(pk=invitation.pk).revoked_at is None


def test_invitation_links_are_braked_per_client_address(admin_client):
    invite(admin_client, "braked@example.com")
    path = link_of(deliver()[0])
    guesser = Client(REMOTE_ADDR="198.51.100.200")
    statuses = [guesser.post(path, {"password": "1"}).status_code for _ in range(11)]
    assert statuses[:10] == [400] * 10 and statuses[10] == 429
