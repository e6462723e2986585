"""Location managers (docs/api.md#locations-and-scope): a member limited to some locations. Admins invite them with
their locations and change them; the invitation's acceptance creates the limited membership; bad locations are a
form error; a location someone is limited to (or invited to) is not deleted; every change is audited. The pages a
location manager may not use are the 403 page and out of their navigation."""

import pytest
from django.test import Client

from audit.models import AuditEvent
from orgs.models import Invitation, Location, Membership
from tests.factories import MembershipFactory
from tests.support.accounts import NEW_PASSWORD, deliver, link_of
from tests.support.clients import logged_in
from tests.support.locations import make_location

pytestmark = pytest.mark.django_db

URL = "/settings/members/"


@pytest.fixture
def manager(org, l1):
    return MembershipFactory(organization=org, role="location_manager", location_ids=[l1.id])


@pytest.fixture
def manager_client(manager):
    return logged_in(manager.user)


def _invite(client, email, role, location_ids=()):
    return client.post(URL, {"email": email, "role": role, "location_ids": [str(pk) for pk in location_ids]})


def test_an_invited_location_manager_joins_limited_to_the_invitations_locations(admin_client, org, l1, l2):
    response = _invite(admin_client, "chef@example.com", "location_manager", [l1.id, l2.id])
    assert response.status_code == 302
    invitation = Invitation.objects.get(organization=org)
    assert (invitation.role, set(invitation.location_ids)) == ("location_manager", {l1.id, l2.id})
    page = admin_client.get(URL).content.decode()
    assert 'data-testid="invitation-locations">(L1, L2)' in page or "(L2, L1)" in page
    created = AuditEvent.objects.get(action="invitation.created")
    assert created.changes["location_ids"] == [None, sorted([str(l1.id), str(l2.id)])]

    person = Client()
    person.post(link_of(deliver()[0]), {"password": NEW_PASSWORD})
    membership = Membership.objects.get(user__username="chef@example.com", organization=org)
    assert (membership.role, set(membership.location_ids)) == ("location_manager", {l1.id, l2.id})
    accepted = AuditEvent.objects.get(action="invitation.accepted")
    assert accepted.changes["location_ids"] == [None, sorted([str(l1.id), str(l2.id)])]
    own = person.get(URL).content.decode()
    assert 'data-testid="own-locations"' in own and 'data-testid="member-list"' not in own


@pytest.mark.parametrize(("role", "locations", "message"), [
    ("location_manager", "none", "Choose at least one location for a location manager."),
    ("location_manager", "repeated", "Location ids must not repeat."),
    ("location_manager", "another org's", "is not one of the available choices"),
    ("member", "l1", "Only a location manager is limited to locations: choose that role, or no location."),
])
def test_bad_locations_are_a_form_error_and_nothing_is_invited(admin_client, org, other_org, l1, role, locations,
                                                               message):
    foreign = make_location(other_org, "Elsewhere", phone_number="+12125550109")
    location_ids = {"none": [], "repeated": [l1.id, l1.id], "another org's": [foreign.id], "l1": [l1.id]}[locations]
    response = _invite(admin_client, "chef@example.com", role, location_ids)
    assert response.status_code == 200
    assert message in " ".join(response.context["form"].errors["location_ids"])
    assert not Invitation.objects.exists()


def test_an_admin_changes_a_members_role_and_locations_and_it_is_audited(admin_client, org, member, l1, l2):
    membership = Membership.objects.get(user=member)
    response = admin_client.post(f"{URL}{membership.pk}/role/", {
        "role": "location_manager", "location_ids": [str(l2.id)]})
    assert response.status_code == 302
    membership.refresh_from_db()
    assert (membership.role, membership.location_ids) == ("location_manager", [l2.id])
    admin_client.post(f"{URL}{membership.pk}/role/", {"role": "location_manager", "location_ids": [str(l1.id)]})
    admin_client.post(f"{URL}{membership.pk}/role/", {"role": "member"})
    membership.refresh_from_db()
    assert (membership.role, membership.location_ids) == ("member", None)
    changes = [e.changes for e in AuditEvent.objects.filter(action="membership.role_changed").order_by("occurred_at")]
    assert changes == [
        {"role": ["member", "location_manager"], "location_ids": [None, [str(l2.id)]]},
        {"location_ids": [[str(l2.id)], [str(l1.id)]]},
        {"role": ["location_manager", "member"], "location_ids": [[str(l1.id)], None]},
    ]


def test_a_role_change_without_locations_is_refused_beside_the_member(admin_client, member):
    membership = Membership.objects.get(user=member)
    response = admin_client.post(f"{URL}{membership.pk}/role/", {"role": "location_manager"})
    assert response.status_code == 200
    assert "Choose at least one location for a location manager." in response.content.decode()
    membership.refresh_from_db()
    assert (membership.role, membership.location_ids) == ("member", None)


def test_a_location_a_member_or_an_invitation_is_limited_to_is_not_deleted(admin_client, org, manager, l1, l2):
    page = admin_client.post(f"/locations/{l1.id}/delete/", follow=True).content.decode()
    assert (f"Members are limited to this location: {manager.user.username}. Change their locations first."
            in page)
    _invite(admin_client, "next@example.com", "location_manager", [l2.id])
    page = admin_client.post(f"/locations/{l2.id}/delete/", follow=True).content.decode()
    assert "Open invitations are limited to this location: next@example.com. Revoke them first." in page
    assert Location.objects.filter(organization=org).count() == 2


WHOLE_ORG_PAGES = ["/settings/", "/settings/api-keys/", "/settings/notifications/", "/settings/audit-log/",
                   "/settings/api-keys/new/", "/settings/webhooks/new/"]


@pytest.mark.parametrize("path", WHOLE_ORG_PAGES)
def test_pages_of_the_whole_organization_are_403_for_a_location_manager(manager_client, path):
    response = manager_client.get(path)
    assert response.status_code == 403
    assert "dashboard/errors/403.html" in [t.name for t in response.templates]


def test_a_location_managers_navigation_leaves_out_what_they_cannot_use(manager_client, member_client):
    nav = manager_client.get("/calls/").content.decode()
    for label in ("Organization", "API keys", "Notifications", "Audit log"):
        assert f"{label}</a>" not in nav
    for label in ("Calls", "Inbox", "Bookings", "Contacts", "Knowledge base", "Members", "Events"):
        assert f"{label}</a>" in nav
    assert "API keys</a>" in member_client.get("/calls/").content.decode()


LIMITED_PAGES = ["/", "/calls/", "/inbox/", "/bookings/", "/contacts/", "/knowledge/", "/knowledge/unanswered/",
                 "/locations/", "/team/", "/settings/escalation-rules/", "/settings/calendars/", "/settings/webhooks/",
                 "/settings/call-fields/", "/settings/members/"]


@pytest.mark.parametrize("path", LIMITED_PAGES)
def test_a_location_manager_reads_the_pages_of_their_locations(manager_client, path):
    assert manager_client.get(path).status_code == 200


def test_a_location_manager_changes_the_knowledge_of_their_locations_only(manager_client, org, l1, l2):
    from knowledge.models import Fact
    from knowledge.services import fact_create

    everywhere = fact_create(org=org, label="Parking", content="Free after 6pm")
    downtown = fact_create(org=org, label="Downtown hours", content="9-5", location=l1)
    uptown = fact_create(org=org, label="Uptown hours", content="10-6", location=l2)
    page = manager_client.get("/knowledge/").content.decode()
    assert "Free after 6pm" in page and "Downtown hours" in page and "Uptown hours" not in page
    assert f"/knowledge/{downtown.pk}/edit/" in page
    assert f"/knowledge/{everywhere.pk}/edit/" not in page  # location-less: read-only within a scope
    # Their location's fact: changed; a new one there: created.
    assert manager_client.post(f"/knowledge/{downtown.pk}/edit/", {
        "label": "Downtown hours", "content": "8-4", "location": str(l1.pk)}).status_code == 302
    assert manager_client.post("/knowledge/new/", {
        "label": "Downtown parking", "content": "Street", "location": str(l1.pk)}).status_code == 302
    # A location-less fact, or a new one for every location: refused on the form, naming the scope.
    for path, location in ((f"/knowledge/{everywhere.pk}/edit/", ""), ("/knowledge/new/", "")):
        response = manager_client.post(path, {"label": "Changed", "content": "x", "location": location})
        assert response.status_code == 200
        assert (f"Limited to locations {l1.pk}: facts without a location cannot be changed within this scope."
                in response.content.decode())
    assert manager_client.post(f"/knowledge/{everywhere.pk}/delete/").status_code == 403
    # Another location's fact: the same 404 as a missing one.
    assert manager_client.post(f"/knowledge/{uptown.pk}/edit/", {"label": "Changed", "content": "x"}).status_code \
        == manager_client.post("/knowledge/00000000-0000-4000-8000-000000000000/edit/", {}).status_code == 404
    assert dict(Fact.objects.values_list("label", "content")) == {
        "Parking": "Free after 6pm", "Downtown hours": "8-4", "Uptown hours": "10-6", "Downtown parking": "Street"}


def test_a_member_still_changes_no_knowledge(member_client, org):
    from knowledge.services import fact_create

    fact = fact_create(org=org, label="Parking", content="Free after 6pm")
    assert f"/knowledge/{fact.pk}/edit/" not in member_client.get("/knowledge/").content.decode()
    assert member_client.post(f"/knowledge/{fact.pk}/edit/", {"label": "x", "content": "x"}).status_code == 403


def test_a_location_manager_adds_a_call_field_of_their_locations_never_one_of_all(manager_client, org, l1):
    from knowledge.models import CallField

    everywhere = manager_client.post("/settings/call-fields/new/", {
        "name": "party_size", "label": "Party size", "type": "number"})
    assert everywhere.status_code == 200
    assert (f"Limited to locations {l1.pk}: call fields of other or all locations cannot be changed within this "
            "scope." in everywhere.content.decode())
    assert not CallField.objects.exists()
    here = manager_client.post("/settings/call-fields/new/", {
        "name": "party_size", "label": "Party size", "type": "number", "location_ids": [str(l1.pk)]})
    assert here.status_code == 302
    assert CallField.objects.get(organization=org).location_ids == [l1.pk]


def test_a_location_manager_adding_a_number_only_another_location_knows_sees_a_creation(manager_client, admin_client,
                                                                                        org, l1, l2):
    """Issue 35 item 11, in the dashboard: the number of a contact with calls at Uptown only is added by Downtown's
    manager exactly as a new number is (the same redirect and message); the contact keeps its values and takes
    the e-mail it lacked. Downtown's own contact and an admin still get the form's 409."""
    from calls.models import Call
    from contacts.models import Contact
    from contacts.services import contact_create

    uptown = contact_create(org=org, phone_number="+14155550102", name="Ann", source="api")
    downtown = contact_create(org=org, phone_number="+14155550101", name="Dan", source="api")
    for contact, location in ((uptown, l2), (downtown, l1)):
        Call.objects.create(organization=org, runtime_call_id=f"rt-{contact.pk}", started_at=contact.created_at,
                            contact=contact, location=location)
    answers = [manager_client.post("/contacts/new/", {"phone_number": phone, "name": "Bob",
                                                       "email": "bob@example.com"}, follow=True)
               for phone in ("+14155550177", "+14155550102")]
    assert [response.redirect_chain for response in answers] == [[("/contacts/", 302)]] * 2
    assert [[str(m) for m in response.context["messages"]] for response in answers] == [
        ["Contact Bob added. It shows here once it has a call at one of your locations."]] * 2
    kept = Contact.objects.get(pk=uptown.pk)
    assert (kept.name, kept.email, kept.source) == ("Ann", "bob@example.com", "api")
    assert AuditEvent.objects.get(action="contact.filled").changes == {"filled": [[], ["email"]]}
    for client, phone in ((manager_client, "+14155550101"), (admin_client, "+14155550102")):
        refused = client.post("/contacts/new/", {"phone_number": phone, "name": "Bob"})
        assert refused.status_code == 200
        assert refused.context["form"].errors["phone_number"] == ["A contact with this phone number already exists."]
    assert Contact.objects.filter(organization=org).count() == 3


def test_a_location_manager_names_a_call_field_as_only_another_location_does(manager_client, org, l1, l2):
    """Issue 35 item 11: Uptown's `party_size` leaves the name free for Downtown's manager; their own one is the
    form's 409."""
    from knowledge.models import CallField
    from knowledge.services import call_field_create

    call_field_create(org=org, name="party_size", label="Guests", type="number", location_ids=[l2.pk])
    body = {"name": "party_size", "label": "Party size", "type": "number", "location_ids": [str(l1.pk)]}
    assert manager_client.post("/settings/call-fields/new/", body).status_code == 302
    again = manager_client.post("/settings/call-fields/new/", body)
    assert again.status_code == 200
    assert again.context["form"].errors["name"] == [
        "A call field with this name already applies to one of these locations."]
    assert sorted(CallField.objects.filter(organization=org).values_list("location_ids", flat=True)) == sorted(
        [[l1.pk], [l2.pk]])
