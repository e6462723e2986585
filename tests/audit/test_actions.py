"""Each recorded action writes exactly one entry, with the right actor, target and changes, through the dashboard
(a signed-in user) and through the API (a key) alike; a refused change writes none. And no secret, key, token or
password used along the way is anywhere in the table."""

import re
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.core import mail
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from rest_framework.test import APIClient

from audit.models import AuditEvent
from knowledge.models import Fact, TeamMember
from knowledge.services import location_create
from orgs.invitations import invitation_accept, invitation_create, token_for
from orgs.models import ApiKey, Invitation, Location, Membership, Organization
from tests.factories import MembershipFactory, UserFactory, make_key
from tests.support.clients import PASSWORD, logged_in
from tests.support.runtime import Runtime, iso
from webhooks.models import Subscription
from webhooks.services import subscription_disable

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_in_tmp")]


@contextmanager
def exactly_one(action):
    """Asserts the block writes exactly one entry, of `action`, and yields a box holding it afterwards."""
    before = set(AuditEvent.objects.values_list("id", flat=True))
    box = {}
    yield box
    new = list(AuditEvent.objects.exclude(id__in=before))
    assert [entry.action for entry in new] == [action]
    box["entry"] = entry = new[0]
    box["actor"] = (entry.actor_type, entry.actor_id, entry.actor_label)
    box["target"] = (entry.target_type, entry.target_id, entry.target_label)


@contextmanager
def nothing_recorded():
    before = AuditEvent.objects.count()
    yield
    assert AuditEvent.objects.count() == before


def user(u):
    return ("user", str(u.pk), u.email)


def key_of(write_key):
    key = write_key[0]
    return ("api_key", str(key.pk), f"{key.name} ({key.key_prefix}...)")


# --- Accounts ---------------------------------------------------------------------------------------------


def test_sign_in_succeeded_failed_and_out(client, org, admin):
    with exactly_one("auth.signed_in") as box:
        assert client.post("/login/", {"username": admin.email, "password": PASSWORD},
                           REMOTE_ADDR="198.51.100.4", HTTP_USER_AGENT="Firefox/140").status_code == 302
    assert box["actor"] == user(admin) and box["target"] == ("user", str(admin.pk), admin.email)
    assert (box["entry"].organization_id, box["entry"].ip, box["entry"].user_agent) == (org.pk, "198.51.100.4",
                                                                                       "Firefox/140")
    with exactly_one("auth.signed_out") as box:
        client.post("/logout/")
    assert box["actor"] == user(admin)
    with exactly_one("auth.sign_in_failed") as box:
        assert client.post("/login/", {"username": admin.email, "password": "wrong-password-x"}).status_code == 200
    # Anyone can fail a sign-in as anyone: it is filed under no organization (docs/api.md#audit-trail, issue 35).
    assert box["actor"] == user(admin) and box["entry"].organization_id.int == 0
    assert "wrong-password-x" not in str(box["entry"].changes)


def test_sign_in_entries_go_only_to_the_org_the_session_acts_in_and_an_unknown_address_to_none(client, org,
                                                                                                other_org, admin):
    """Issue 35 item 6: a member's sign-in address and browser reach the organization the session signs in to,
    never the other organizations they belong to."""
    MembershipFactory(user=admin, organization=other_org)
    client.post("/login/", {"username": admin.email, "password": PASSWORD}, REMOTE_ADDR="198.51.100.9")
    signed_in = AuditEvent.objects.filter(action="auth.signed_in", actor_id=str(admin.pk))
    assert list(signed_in.values_list("organization_id", "ip")) == [(org.pk, "198.51.100.9")]
    assert not AuditEvent.objects.filter(organization_id=other_org.pk).exists()
    client.post("/logout/")
    assert list(AuditEvent.objects.filter(action="auth.signed_out").values_list("organization_id", flat=True)) == [
        org.pk]
    assert not AuditEvent.objects.filter(organization_id=other_org.pk).exists()
    Client().post("/login/", {"username": "Nobody@Example.com", "password": "x"})
    failed = AuditEvent.objects.get(action="auth.sign_in_failed")
    assert (failed.organization_id.int, failed.actor_id, failed.actor_label) == (0, None, "nobody@example.com")


def test_password_reset_requested_and_completed(client, org, admin):
    with exactly_one("auth.password_reset_requested") as box:
        client.post("/password-reset/", {"email": admin.email})
    assert box["target"] == ("user", str(admin.pk), admin.email)
    # Anyone may ask for anyone's reset: never in the account's organizations' trails (issue 35 item 6).
    assert box["entry"].organization_id.int == 0
    uid, token = urlsafe_base64_encode(force_bytes(admin.pk)), default_token_generator.make_token(admin)
    set_url = client.get(f"/password-reset/{uid}/{token}/")["Location"]
    with exactly_one("auth.password_reset_completed") as box:
        response = client.post(set_url, {"new_password1": "A-new-passw0rd!!", "new_password2": "A-new-passw0rd!!"})
        assert response.status_code == 302
    assert box["actor"] == user(admin) and box["entry"].organization_id.int == 0  # no session of the account acts
    assert "A-new-passw0rd!!" not in _table_text()


# --- API keys, the organization, members, invitations ---------------------------------------------------------


def test_api_key_created_and_revoked_in_the_dashboard(admin_client, admin, org):
    with exactly_one("api_key.created") as box:
        response = admin_client.post("/settings/api-keys/new/", {"name": "CRM", "scope": "read_write_audit"},
                                     follow=True)
    key = ApiKey.objects.get(name="CRM")
    plaintext = re.search(r"va_live_[A-Za-z0-9]{32}", response.content.decode()).group(0)
    assert box["actor"] == user(admin)
    assert box["target"] == ("api_key", str(key.pk), f"CRM ({key.key_prefix}...)")
    assert box["entry"].changes == {"name": [None, "CRM"], "scopes": [None, ["read", "write", "audit"]],
                                    "key_prefix": [None, key.key_prefix]}
    with exactly_one("api_key.revoked") as box:
        admin_client.post(f"/settings/api-keys/{key.pk}/revoke/")
    assert box["actor"] == user(admin) and box["target"][1] == str(key.pk)
    with nothing_recorded():  # revoking twice changes nothing
        admin_client.post(f"/settings/api-keys/{key.pk}/revoke/")
    text = _table_text()
    assert plaintext not in text and key.key_digest not in text


def test_a_key_limited_to_locations_records_them(admin_client, admin, org):
    downtown = location_create(org=org, name="Downtown", timezone="UTC")
    with exactly_one("api_key.created") as box:
        admin_client.post("/settings/api-keys/new/", {"name": "POS", "scope": "read",
                                                      "location_ids": [str(downtown.pk)]})
    key = ApiKey.objects.get(name="POS")
    assert box["entry"].changes == {"name": [None, "POS"], "scopes": [None, ["read"]],
                                    "key_prefix": [None, key.key_prefix], "location_ids": [None, [str(downtown.pk)]]}


def test_a_member_refused_records_nothing(member_client, org):
    with nothing_recorded():
        assert member_client.post("/settings/api-keys/new/", {"name": "x", "scope": "read"}).status_code == 403
        assert member_client.post("/settings/", {"name": "Mine now"}).status_code == 403


def test_organization_settings_changed(admin_client, admin, org):
    with exactly_one("organization.updated") as box:
        admin_client.post("/settings/", {"name": "Acme 2", "default_phone_region": "US", "time_zone": "UTC",
                                          "auto_save_contacts": "on", "call_recording_enabled": "on"})
    assert box["actor"] == user(admin)
    assert box["target"] == ("organization", str(org.pk), "Acme 2")
    assert box["entry"].changes == {"name": ["Acme Pizza", "Acme 2"]}


def test_member_role_changed_removed_and_left(admin_client, admin, org, member):
    membership = Membership.objects.get(user=member, organization=org)
    with exactly_one("membership.role_changed") as box:
        admin_client.post(f"/settings/members/{membership.pk}/role/", {"role": "admin"})
    assert box["actor"] == user(admin)
    assert box["target"] == ("membership", str(member.pk), member.email)
    assert box["entry"].changes == {"role": ["member", "admin"]}
    with exactly_one("membership.removed") as box:
        admin_client.post(f"/settings/members/{membership.pk}/remove/")
    assert box["target"][1] == str(member.pk) and box["actor"] == user(admin)
    leaver = MembershipFactory(organization=org, role="member").user
    with exactly_one("membership.left") as box:
        logged_in(leaver).post("/settings/members/leave/")
    assert box["actor"] == user(leaver) and box["target"][1] == str(leaver.pk)


def test_invitation_created_resent_revoked_and_accepted(admin_client, admin, org):
    with exactly_one("invitation.created") as box:
        admin_client.post("/settings/members/", {"email": "New@Example.com", "role": "member"})
    invitation = Invitation.objects.get(email="new@example.com")
    assert box["actor"] == user(admin)
    assert box["target"] == ("invitation", str(invitation.pk), "new@example.com")
    assert box["entry"].changes == {"email": [None, "new@example.com"], "role": [None, "member"]}
    with exactly_one("invitation.resent"):
        admin_client.post(f"/settings/invitations/{invitation.pk}/resend/")
    invitation.refresh_from_db()
    token = token_for(invitation.pk, invitation.nonce)
    with exactly_one("invitation.revoked"):
        admin_client.post(f"/settings/invitations/{invitation.pk}/revoke/")
    second = invitation_create(org=org, by=admin, email="joiner@example.com", role="admin")
    joiner = UserFactory(email="joiner@example.com", username="joiner@example.com")
    second_token = token_for(second.pk, second.nonce)
    with exactly_one("invitation.accepted") as box:
        assert logged_in(joiner).post(f"/invitations/{second.pk}/{second_token}/").status_code == 302
    assert box["actor"] == user(joiner) and box["entry"].changes == {"role": [None, "admin"]}
    text = _table_text()
    assert token not in text and second_token not in text and invitation.token_digest not in text
    for message in mail.outbox:  # nor any link that was mailed
        for link_token in re.findall(r"/invitations/[0-9a-f-]+/([^/\s]+)/", message.body):
            assert link_token not in text


def test_accepting_twice_records_once(admin, org):
    invitation = invitation_create(org=org, by=admin, email="twice@example.com", role="member")
    joiner = UserFactory(email="twice@example.com", username="twice@example.com")
    token = token_for(invitation.pk, invitation.nonce)
    with exactly_one("invitation.accepted"):
        invitation_accept(invitation_id=invitation.pk, token=token, user=joiner)
    with nothing_recorded(), pytest.raises(Exception):  # noqa: B017, PT011 - a spent link: InvitationInvalid
        invitation_accept(invitation_id=invitation.pk, token=token, user=joiner)


# --- Webhook subscriptions -------------------------------------------------------------------------------------


@pytest.fixture
def local_urls(settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True


def _subscription(org):
    return Subscription.objects.for_org(org).get()


def test_subscription_lifecycle_through_the_api(api, write_key, org, local_urls):
    with exactly_one("webhook_subscription.created") as box:
        response = api.post("/v1/webhook-subscriptions", {"url": "http://127.0.0.1:9/in/tok_s3cr3tpath?k=s3cr3tq",
                                                          "events": ["call.ended"]}, format="json")
    secret = response.json()["secret"]
    sub = _subscription(org)
    assert box["actor"] == key_of(write_key)
    # The trail names the endpoint by its scheme and host only (issue 35 item 11): a receiver's path or query
    # often carries a token, and every auditor reads the trail.
    assert box["target"] == ("webhook_subscription", str(sub.pk), "http://127.0.0.1:9/…")
    assert box["entry"].changes["url"] == [None, "http://127.0.0.1:9/…"]
    path = f"/v1/webhook-subscriptions/{sub.pk}"
    with exactly_one("webhook_subscription.updated") as box:
        api.patch(path, {"events": ["call.ended", "contact.created"], "enabled": False}, format="json")
    assert box["entry"].changes == {"events": [["call.ended"], ["call.ended", "contact.created"]],
                                    "enabled": [True, False]}
    with exactly_one("webhook_subscription.reenabled") as box:
        api.patch(path, {"enabled": True}, format="json")
    assert box["entry"].changes == {"enabled": [False, True]}
    with nothing_recorded():  # the same values again: no change, no entry
        api.patch(path, {"enabled": True}, format="json")
    with exactly_one("webhook_subscription.secret_rotated") as box:
        rotated = api.post(f"{path}/rotate-secret", {"grace_period_seconds": 60}, format="json").json()["secret"]
    assert box["entry"].changes == {"secret": ["[redacted]", "[redacted]"], "grace_period_seconds": [None, 60]}
    since = (timezone.now() - timedelta(days=1)).isoformat()
    with exactly_one("webhook_subscription.replayed") as box:
        assert api.post(f"{path}/replay", {"since": since}, format="json").status_code == 202
    assert box["entry"].changes["queued"] == [None, 0]
    with exactly_one("webhook_subscription.recovered") as box:
        assert api.post(f"{path}/recover", {"since": since}, format="json").status_code == 202
    assert box["entry"].changes["requeued"] == [None, 0]
    with exactly_one("webhook_subscription.tested") as box:
        assert api.post(f"{path}/test", {}, format="json").status_code == 200
    assert box["entry"].changes["event_type"] == [None, "call.ended"]
    with exactly_one("webhook_subscription.deleted") as box:
        assert api.delete(path).status_code == 204
    assert box["actor"] == key_of(write_key) and box["target"][1] == str(sub.pk)
    text = _table_text()
    assert secret not in text and rotated not in text and sub.secret_encrypted not in text
    assert "s3cr3t" not in text  # not the path, not the query, in no entry (replayed, tested, deleted...)


def test_subscription_lifecycle_through_the_dashboard(admin_client, admin, org, local_urls):
    with exactly_one("webhook_subscription.created") as box:
        admin_client.post("/settings/webhooks/new/", {"url": "http://127.0.0.1:9/in", "events": ["call.ended"],
                                                      "description": ""})
    sub = _subscription(org)
    assert box["actor"] == user(admin)
    base = f"/settings/webhooks/{sub.pk}"
    with exactly_one("webhook_subscription.updated") as box:
        admin_client.post(f"{base}/edit/", {"url": "http://127.0.0.1:9/v2", "events": ["call.ended"],
                                            "description": "New"})
    assert box["entry"].changes == {"url": ["http://127.0.0.1:9/…", "http://127.0.0.1:9/…"],
                                    "description": ["", "New"]}
    with exactly_one("webhook_subscription.updated") as box:
        admin_client.post(f"{base}/enabled/", {"enabled": "0"})
    assert box["entry"].changes == {"enabled": [True, False]}
    with exactly_one("webhook_subscription.reenabled") as box:
        admin_client.post(f"{base}/enabled/", {"enabled": "1"})
    with exactly_one("webhook_subscription.secret_rotated"):
        admin_client.post(f"{base}/rotate/", {"grace_period_seconds": "0"})
    with exactly_one("webhook_subscription.tested"):
        admin_client.post(f"{base}/test/", {"type": "call.ended"})
    with exactly_one("webhook_subscription.replayed"):
        since = (timezone.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
        admin_client.post(f"{base}/replay/", {"since": since})
    with exactly_one("webhook_subscription.deleted") as box:
        admin_client.post(f"{base}/delete/")
    assert box["actor"] == user(admin)


def test_auto_disable_is_the_systems_and_re_enabling_is_recorded(org, api, local_urls):
    sub_id = api.post("/v1/webhook-subscriptions", {"url": "http://127.0.0.1:9/in", "events": ["call.ended"]},
                      format="json").json()["data"]["id"]
    with exactly_one("webhook_subscription.auto_disabled") as box, transaction.atomic():
        assert subscription_disable(subscription_id=sub_id, reason="The endpoint answered 410 Gone.",
                                    now=timezone.now())
    assert box["actor"] == ("system", None, "system")
    assert box["entry"].changes == {"enabled": [True, False],
                                    "disabled_reason": ["", "The endpoint answered 410 Gone."]}
    with exactly_one("webhook_subscription.reenabled"):
        api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"enabled": True}, format="json")


# --- Orders, bookings, follow-ups ------------------------------------------------------------------------------


def test_order_status_booking_cancel_and_follow_ups_through_the_api(world, api, write_key):
    call = world["call"]
    with exactly_one("order.status_changed") as box:
        assert api.patch(f"/v1/calls/{call.pk}/order-status", {"status": "canceled"}, format="json").status_code == 200
    assert box["actor"] == key_of(write_key)
    # Named by the id the API knows it by, `/v1/orders/{call_id}` (issue 35 item 11): never its internal key.
    assert box["target"][0:2] == ("order", str(call.pk))
    audit_api = APIClient()
    audit_api.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(call.organization, scope='read_audit')[1]}")
    found = audit_api.get("/v1/audit-events", {"target_id": str(call.pk), "action": "order.status_changed"})
    assert [entry["id"] for entry in found.json()["data"]] == [str(box["entry"].pk)]
    assert box["entry"].changes == {"status": ["new", "canceled"], "canceled_by": [None, "team_via_api"]}
    with nothing_recorded():  # an invalid move changes nothing
        assert api.patch(f"/v1/calls/{call.pk}/order-status", {"status": "new"}, format="json").status_code == 409
    booking = world["booking"]
    with exactly_one("booking.canceled") as box:
        assert api.post(f"/v1/bookings/{booking.pk}/cancel", {}, format="json").status_code == 200
    assert box["target"][0:2] == ("booking", str(booking.pk))
    assert box["entry"].changes == {"status": ["confirmed", "canceled"]}
    for kind, path in (("callback", "callbacks"), ("message", "messages"), ("escalation", "escalations")):
        item = world[kind]
        with exactly_one(f"{kind}.handled") as box:
            assert api.patch(f"/v1/{path}/{item.pk}", {"handled": True}, format="json").status_code == 200
        assert box["actor"] == key_of(write_key) and box["target"][0:2] == (kind, str(item.pk))
        assert box["entry"].changes == {"handled": [False, True]}
        with nothing_recorded():
            api.patch(f"/v1/{path}/{item.pk}", {"handled": True}, format="json")


def test_order_status_booking_cancel_and_follow_ups_in_the_dashboard(world, admin_client, admin):
    call = world["call"]
    with exactly_one("order.status_changed") as box:
        admin_client.post(f"/calls/{call.pk}/order-status", {"status": "in_progress"})
    assert box["actor"] == user(admin) and box["entry"].changes == {"status": ["new", "in_progress"]}
    assert box["target"][0:2] == ("order", str(call.pk))
    booking = world["booking"]
    with exactly_one("booking.canceled") as box:
        admin_client.post(f"/bookings/{booking.pk}/cancel")
    assert box["actor"] == user(admin)
    for kind in ("callback", "message", "escalation"):
        with exactly_one(f"{kind}.handled") as box:
            admin_client.post(f"/inbox/{kind}/{world[kind].pk}/handled")
        assert box["actor"] == user(admin) and box["target"][1] == str(world[kind].pk)


def test_the_runtime_is_the_actor_of_what_it_changes(org):
    runtime = Runtime(org)
    now = timezone.now().replace(microsecond=0)
    first, _ = runtime.start(started_at=now - timedelta(minutes=2))
    assert runtime.complete(first, ended_at=iso(now - timedelta(minutes=1))).status_code in (200, 201)
    second, _ = runtime.start(started_at=now)
    with exactly_one("order.status_changed") as box:
        assert runtime.event(second, type="order_cancel_requested", data={}).status_code == 201
    assert box["actor"] == ("runtime", None, "agent runtime")
    assert box["entry"].changes == {"status": ["new", "canceled"], "canceled_by": [None, "caller_via_phone"]}


# --- No secret anywhere ------------------------------------------------------------------------------------------


def _table_text() -> str:
    """Every entry's every column as text, the way a search through a database dump would see them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(string_agg(audit_event::text, E'\\n'), '') FROM audit_event")
        return cursor.fetchone()[0]


def test_the_keys_of_the_fixtures_are_not_in_the_table(write_key, read_key):
    text = _table_text()
    assert "api_key.created" in text
    for key, plaintext in (write_key, read_key):
        assert plaintext not in text and key.key_digest not in text and plaintext[12:] not in text


# --- What the agent knows ----------------------------------------------------------------------------------------

KNOWLEDGE_API = [
    ("fact", "/v1/facts", {"label": "Hours", "content": "9-5"}, {"content": "9-6"}, {"content": ["9-5", "9-6"]}),
    ("team_member", "/v1/team-members", {"name": "Sam"}, {"role": "Chef"}, {"role": [None, "Chef"]}),
    ("escalation_rule", "/v1/escalation-rules", {"name": "Manager", "keywords": ["manager"],
                                                 "destination_type": "phone", "destination_phone": "+14155550100"},
     {"enabled": False}, {"enabled": [True, False]}),
    ("calendar", "/v1/calendars", {"name": "Tables", "timezone": "UTC"}, {"slot_minutes": 15},
     {"slot_minutes": [30, 15]}),
]


@pytest.mark.parametrize(("kind", "path", "create", "patch", "changes"), KNOWLEDGE_API,
                         ids=[row[0] for row in KNOWLEDGE_API])
def test_knowledge_created_changed_and_deleted_through_the_api(api, write_key, kind, path, create, patch, changes):
    with exactly_one(f"{kind}.created") as box:
        response = api.post(path, create, format="json")
        assert response.status_code == 201, response.json()
    item_id = response.json()["data"]["id"]
    assert box["actor"] == key_of(write_key) and box["target"][:2] == (kind, item_id)
    assert all(box["entry"].changes[field] == [None, value] for field, value in create.items())
    with exactly_one(f"{kind}.updated") as box:
        assert api.patch(f"{path}/{item_id}", patch, format="json").status_code == 200
    assert box["entry"].changes == changes
    with nothing_recorded():  # the same values again: saved as it was, no entry
        api.patch(f"{path}/{item_id}", patch, format="json")
    with exactly_one(f"{kind}.deleted") as box:
        assert api.delete(f"{path}/{item_id}").status_code == 204
    assert box["target"][:2] == (kind, item_id)
    gone = box["entry"].changes
    assert set(create) <= set(gone) and all(after is None for _, after in gone.values())
    assert all(gone[field][0] == value for field, value in patch.items())  # the row as it was when deleted


def test_the_first_location_setting_the_orgs_zone_is_recorded_as_a_settings_change(admin_client, admin, org):
    location = {"name": "Uptown", "address": "5 High St", "timezone": "Europe/London", "phone_number": "+442071838750"}
    admin_client.post("/locations/new/", location)
    [entry] = AuditEvent.objects.for_org(org).filter(action="organization.updated")
    assert entry.changes == {"time_zone": ["UTC", "Europe/London"]}
    assert (entry.actor_type, entry.actor_id, entry.actor_label) == user(admin)


def test_knowledge_created_changed_and_deleted_in_the_dashboard(admin_client, admin, org):
    Organization.objects.filter(pk=org.pk).update(time_zone="Europe/London")  # the first location changes no setting
    location = {"name": "Uptown", "address": "5 High St", "timezone": "Europe/London", "phone_number": "+442071838750"}
    with exactly_one("location.created") as box:
        admin_client.post("/locations/new/", location)
    uptown = Location.objects.for_org(org).get(name="Uptown")
    assert box["actor"] == user(admin) and box["target"] == ("location", str(uptown.pk), "Uptown")
    with exactly_one("location.updated") as box:
        admin_client.post(f"/locations/{uptown.pk}/edit/", {**location, "address": "7 High St"})
    assert box["entry"].changes == {"address": ["5 High St", "7 High St"]}
    with exactly_one("fact.created"):
        admin_client.post("/knowledge/new/", {"label": "Delivery", "content": "5 miles"})
    fact = Fact.objects.for_org(org).get(label="Delivery")
    with exactly_one("fact.updated") as box:
        admin_client.post(f"/knowledge/{fact.pk}/edit/", {"label": "Delivery", "content": "6 miles"})
    assert box["entry"].changes == {"content": ["5 miles", "6 miles"]}
    with exactly_one("fact.deleted"):
        admin_client.post(f"/knowledge/{fact.pk}/delete/")
    with exactly_one("team_member.created"):
        admin_client.post("/team/new/", {"name": "Sam Chen", "phone_number": "(415) 555-0112"})
    sam = TeamMember.objects.for_org(org).get(name="Sam Chen")
    with exactly_one("team_member.deleted") as box:
        admin_client.post(f"/team/{sam.pk}/delete/")
    assert box["actor"] == user(admin)
    with exactly_one("location.deleted"):
        admin_client.post(f"/locations/{uptown.pk}/delete/")


def test_a_refused_knowledge_change_records_nothing(api, org):
    api.post("/v1/facts", {"label": "Hours", "content": "9-5"}, format="json")
    with nothing_recorded():
        assert api.post("/v1/facts", {"label": "Hours", "content": "again"}, format="json").status_code == 409
        assert api.post("/v1/facts", {"label": "", "content": ""}, format="json").status_code == 400
