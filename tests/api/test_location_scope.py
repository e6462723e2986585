"""A key limited to location L1 (docs/api.md#locations-and-scope): what it reads and changes at L1, the exact
answers when it reaches for L2 or for what belongs to the whole organization, and that nothing changes then."""

import pytest

from audit.models import AuditEvent
from calls.models import Booking, CallbackRequest, Message, Order
from contacts.models import Contact
from knowledge.models import Calendar, CallField, EscalationRule, Fact, TeamMember
from knowledge.services import (
    calendar_create,
    call_field_create,
    escalation_rule_create,
    fact_create,
    team_member_create,
)
from orgs.models import ApiKey, Location
from tests.factories import MembershipFactory
from tests.support.clients import org_client
from tests.support.locations import limited_client, make_location
from tests.support.matrix import snapshot
from tests.support.queries import queries_per_page
from tests.support.runtime import Runtime, order_body

NOT_FOUND = {"error": "not_found"}


pytestmark = pytest.mark.usefixtures("media_in_tmp")


def forbidden(l1, what):
    message = f"Limited to locations {l1.id}: {what} cannot be changed within this scope."
    return {"error": "forbidden", "details": {"message": message, "location_ids": [str(l1.id)]}}


def _call_with_everything(org, location, phone, calendar):
    runtime = Runtime(org)
    call_id, _ = runtime.start(location_id=location.id, from_number=phone)
    assert runtime.event(call_id, type="callback_requested", label="cb", data={
        "requested_window": "asap", "reason": "x"}).status_code == 201
    assert runtime.event(call_id, type="appointment_booked", label="book", data={
        "calendar_id": str(calendar.id), "start_at": "2030-01-07T10:00:00Z",
        "end_at": "2030-01-07T10:30:00Z"}).status_code == 201
    assert runtime.complete(call_id, order=order_body()).status_code in (200, 201)
    return runtime.call(call_id)


@pytest.fixture
def calls(org, l1, l2):
    hours = [{"day": "mon", "start": "00:00", "end": "24:00"}]
    at_l1 = _call_with_everything(org, l1, "+14155550101",
                                  calendar_create(org=org, name="L1", location=l1, weekly_hours=hours))
    at_l2 = _call_with_everything(org, l2, "+14155550102",
                                  calendar_create(org=org, name="L2", location=l2, weekly_hours=hours))
    return at_l1, at_l2


def test_an_l1_key_reads_l1_and_never_l2(l1_api, calls):
    at_l1, at_l2 = calls
    for path in ("/v1/calls", "/v1/orders", "/v1/callbacks", "/v1/bookings", "/v1/contacts"):
        body = l1_api.get(path).content.decode()
        assert str(at_l2.pk) not in body and str(at_l2.contact_id) not in body, path
    assert [row["id"] for row in l1_api.get("/v1/calls").json()["data"]] == [str(at_l1.pk)]
    assert [row["id"] for row in l1_api.get("/v1/contacts").json()["data"]] == [str(at_l1.contact_id)]
    assert l1_api.get(f"/v1/calls/{at_l1.pk}").status_code == 200
    assert l1_api.get(f"/v1/contacts/{at_l1.contact_id}").status_code == 200


def test_a_phone_search_finds_no_l2_contact(l1_api, calls):
    assert l1_api.get("/v1/contacts", {"search": "415 555 0102"}).json()["data"] == []
    assert len(l1_api.get("/v1/contacts", {"search": "415 555 0101"}).json()["data"]) == 1


def test_an_l1_key_cannot_change_an_l2_orders_status(l1_api, calls):
    at_l2 = calls[1]
    before = snapshot()
    response = l1_api.patch(f"/v1/calls/{at_l2.pk}/order-status", {"status": "fulfilled"}, format="json")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert snapshot() == before
    assert Order.objects.get(call=at_l2).status == "new"


def test_an_l1_key_changes_an_l1_orders_status(l1_api, calls):
    at_l1 = calls[0]
    response = l1_api.patch(f"/v1/calls/{at_l1.pk}/order-status", {"status": "fulfilled"}, format="json")
    assert response.status_code == 200
    assert Order.objects.get(call=at_l1).status == "fulfilled"


def test_an_l1_key_cannot_cancel_an_l2_booking(l1_api, calls):
    booking = Booking.objects.get(call=calls[1])
    before = snapshot()
    response = l1_api.post(f"/v1/bookings/{booking.pk}/cancel", {}, format="json")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert snapshot() == before


def test_an_l1_key_cannot_mark_an_l2_callback_handled(l1_api, calls):
    callback = CallbackRequest.objects.get(call=calls[1])
    before = snapshot()
    response = l1_api.patch(f"/v1/callbacks/{callback.pk}", {"handled": True}, format="json")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert snapshot() == before
    assert l1_api.patch(f"/v1/callbacks/{CallbackRequest.objects.get(call=calls[0]).pk}", {"handled": True},
                        format="json").status_code == 200


def test_an_l1_key_cannot_create_an_org_wide_fact(l1_api, l1):
    before = snapshot()
    response = l1_api.post("/v1/facts", {"label": "Parking", "content": "Free"}, format="json")
    assert (response.status_code, response.json()) == (403, forbidden(l1, "facts without a location"))
    assert snapshot() == before
    assert not Fact.objects.exists()


def test_an_l1_key_creates_a_fact_at_l1_but_not_at_l2(l1_api, l1, l2):
    response = l1_api.post("/v1/facts", {"label": "Parking", "content": "Free", "location_id": str(l1.id)},
                           format="json")
    assert response.status_code == 201
    response = l1_api.post("/v1/facts", {"label": "Valet", "content": "No", "location_id": str(l2.id)}, format="json")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert list(Fact.objects.values_list("label", flat=True)) == ["Parking"]


def test_an_org_wide_fact_is_read_but_not_changed_moved_or_deleted(l1_api, org, l1):
    shared = fact_create(org=org, label="Hours", content="9-5")
    assert l1_api.get(f"/v1/facts/{shared.pk}").json()["data"]["label"] == "Hours"
    before = snapshot()
    for response in (
        l1_api.patch(f"/v1/facts/{shared.pk}", {"content": "8-6"}, format="json"),
        l1_api.patch(f"/v1/facts/{shared.pk}", {"location_id": str(l1.id)}, format="json"),
        l1_api.put(f"/v1/facts/{shared.pk}", {"label": "Hours", "content": "8-6"}, format="json"),
        l1_api.delete(f"/v1/facts/{shared.pk}"),
    ):
        assert (response.status_code, response.json()) == (403, forbidden(l1, "facts without a location"))
    assert snapshot() == before


def test_an_l1_fact_cannot_be_made_org_wide(l1_api, org, l1):
    own = fact_create(org=org, label="Parking", content="Free", location=l1)
    before = snapshot()
    response = l1_api.patch(f"/v1/facts/{own.pk}", {"location_id": None}, format="json")
    assert (response.status_code, response.json()) == (403, forbidden(l1, "facts without a location"))
    assert snapshot() == before


def test_an_l1_key_cannot_create_org_wide_rules_or_calendars_nor_team_members(l1_api, l1):
    before = snapshot()
    response = l1_api.post("/v1/escalation-rules", {
        "name": "Any", "keywords": ["x"], "destination_type": "phone", "destination_phone": "+14155550100"},
        format="json")
    assert (response.status_code, response.json()) == (403, forbidden(l1, "escalation rules without a location"))
    response = l1_api.post("/v1/calendars", {"name": "Any", "timezone": "UTC"}, format="json")
    assert (response.status_code, response.json()) == (403, forbidden(l1, "calendars without a location"))
    response = l1_api.post("/v1/team-members", {"name": "Sam"}, format="json")
    assert (response.status_code, response.json()) == (403, forbidden(l1, "team members"))
    assert snapshot() == before
    assert not (EscalationRule.objects.exists() or Calendar.objects.exists() or TeamMember.objects.exists())


def test_an_l1_key_sees_its_own_location_only(l1_api, l1, l2):
    assert [row["id"] for row in l1_api.get("/v1/locations").json()["data"]] == [str(l1.id)]
    assert l1_api.get(f"/v1/locations/{l2.id}").json() == NOT_FOUND
    assert Location.objects.count() == 2


def test_an_l1_key_creates_a_contact_it_then_cannot_see(l1_api):
    response = l1_api.post("/v1/contacts", {"phone_number": "+14155550199"}, format="json")
    assert response.status_code == 201
    # Nothing located yet: the contact is the organization's until it has a call at L1.
    assert l1_api.get(f"/v1/contacts/{response.json()['data']['id']}").json() == NOT_FOUND


def _created_shape(body: dict) -> dict:
    """A creation's body with its times and id set aside (checked on their own)."""
    data = dict(body["data"])
    for key in ("id", "created_at", "updated_at"):
        data.pop(key)
    return {**body, "data": data}


def test_a_number_only_l2_knows_is_answered_as_a_creation(l1_api, org, l2, calls):
    """Issue 35 item 11: a number the organization has under a contact L1 cannot see is answered exactly as a new
    number is (201, the request's fields, `source: api`, times of now), with the contact's own id; the contact keeps
    every value it has and takes those it lacked; the audit trail names the key and the fields filled, never their
    values. The key reads the contact no more than one it created itself."""
    theirs = Contact.objects.get(pk=calls[1].contact_id)
    Contact.objects.filter(pk=theirs.pk).update(name="Ann", email=None, notes="Allergic to nuts")
    theirs.refresh_from_db()
    fresh = l1_api.post("/v1/contacts", {"phone_number": "(415) 555-0177", "name": "Bob", "email": "bob@example.com"},
                        format="json")
    known = l1_api.post("/v1/contacts", {"phone_number": "(415) 555-0102", "name": "Bob", "email": "bob@example.com"},
                        format="json")
    assert (fresh.status_code, known.status_code) == (201, 201)
    assert _created_shape(known.json()) == {"data": {
        "phone_number": "+14155550102", "name": "Bob", "email": "bob@example.com", "notes": None, "source": "api",
        "first_call_id": None}}
    assert _created_shape(fresh.json())["data"] == {**_created_shape(known.json())["data"],
                                                     "phone_number": "+14155550177"}
    data = known.json()["data"]
    assert data["id"] == str(theirs.pk)
    assert data["created_at"] == data["updated_at"] > fresh.json()["data"]["created_at"]
    assert sorted(known.headers) == sorted(fresh.headers)
    assert l1_api.get(f"/v1/contacts/{theirs.pk}").json() == NOT_FOUND
    assert l1_api.get("/v1/contacts", {"search": "415 555 0102"}).json()["data"] == []

    kept = Contact.objects.get(pk=theirs.pk)
    assert (kept.name, kept.email, kept.notes, kept.source, kept.first_call_id, kept.created_at) == (
        "Ann", "bob@example.com", "Allergic to nuts", theirs.source, theirs.first_call_id, theirs.created_at)
    entry = AuditEvent.objects.get(organization_id=org.pk, action="contact.filled")
    key = ApiKey.objects.get(organization=org, name="L1 key")
    assert (entry.actor_type, entry.actor_id, entry.target_type, entry.target_id, entry.target_label,
            entry.changes) == ("api_key", str(key.pk), "contact", str(theirs.pk), f"contact {theirs.pk}",
                               {"filled": [[], ["email"]]})
    # Asked again, nothing is left to fill: the same answer, the contact as it was, the request still recorded.
    again = l1_api.post("/v1/contacts", {"phone_number": "+14155550102", "name": "Carl"}, format="json")
    assert (again.status_code, again.json()["data"]["id"], again.json()["data"]["name"]) == (201, str(theirs.pk),
                                                                                            "Carl")
    assert Contact.objects.get(pk=theirs.pk).name == "Ann"
    assert [e.changes for e in AuditEvent.objects.filter(action="contact.filled").order_by("occurred_at", "id")] == [
        {"filled": [[], ["email"]]}, {"filled": [[], []]}]
    assert Contact.objects.filter(organization=org).count() == 3


def test_a_number_the_scope_or_the_organization_sees_is_still_409(l1_api, org, admin, calls):
    """The 409 stays where it tells nothing: the key's own locations' contact, and every number for a key of the
    whole organization."""
    conflict = {"error": "conflict", "details": {"field": "phone_number"}}
    whole = org_client(org, admin=admin, name="Everywhere")
    before = snapshot()
    ours = l1_api.post("/v1/contacts", {"phone_number": "+14155550101", "name": "Bob"}, format="json")
    assert (ours.status_code, ours.json()) == (409, conflict)
    for phone in ("+14155550101", "+14155550102"):
        response = whole.post("/v1/contacts", {"phone_number": phone, "name": "Bob"}, format="json")
        assert (response.status_code, response.json()) == (409, conflict), phone
    assert snapshot() == before
    assert not AuditEvent.objects.filter(action="contact.filled").exists()


def test_a_scoped_key_changes_no_phone_number_so_a_hidden_one_is_never_told_apart(l1_api, org, admin, l1, calls):
    """Issue 35 item 11: a number held by a contact L1 cannot see, a free number and any other are the same 403
    naming the scope for a key of L1 (a 409 would tell the first apart); its other fields change as for any key, and
    a key of the whole organization still gets the 409 for a number taken."""
    ours = calls[0].contact_id
    refused = {"error": "forbidden", "details": {
        "message": f"Limited to locations {l1.id}: a contact's phone number cannot be changed within this scope.",
        "location_ids": [str(l1.id)]}}
    before = snapshot()
    for phone in ("+14155550102", "+14155550177"):
        response = l1_api.patch(f"/v1/contacts/{ours}", {"phone_number": phone}, format="json")
        assert (response.status_code, response.json()) == (403, refused), phone
    assert snapshot() == before
    same = l1_api.patch(f"/v1/contacts/{ours}", {"phone_number": "(415) 555-0101", "name": "Dana"}, format="json")
    assert (same.status_code, same.json()["data"]["phone_number"], same.json()["data"]["name"]) == (
        200, "+14155550101", "Dana")
    whole = org_client(org, admin=admin, name="Everywhere")
    taken = whole.patch(f"/v1/contacts/{ours}", {"phone_number": "+14155550102"}, format="json")
    assert (taken.status_code, taken.json()) == (409, {"error": "conflict", "details": {"field": "phone_number"}})
    moved = whole.patch(f"/v1/contacts/{ours}", {"phone_number": "+14155550177"}, format="json")
    assert (moved.status_code, moved.json()["data"]["phone_number"]) == (200, "+14155550177")


LISTS = ["/v1/calls", "/v1/orders", "/v1/callbacks", "/v1/messages", "/v1/escalations", "/v1/bookings",
         "/v1/contacts", "/v1/facts", "/v1/team-members", "/v1/locations", "/v1/escalation-rules", "/v1/calendars",
         "/v1/call-fields"]


@pytest.fixture
def two_of_each_at_l1(org, l1, l2):
    """Two rows of every listed kind within the scope (L1 and L3), and the same again at L2."""
    l3 = make_location(org, "L3", phone_number="+12125550103")
    hours = [{"day": "mon", "start": "00:00", "end": "24:00"}]
    for n, location in enumerate((l1, l3, l2)):
        member = team_member_create(org=org, name=f"Manager {n}")
        rule = escalation_rule_create(org=org, name=f"Rule {n}", destination_type="team_member",
                                      destination_team_member=member, keywords=["manager"], location=location)
        fact_create(org=org, label=f"Fact {n}", content="x", location=location)
        call_field_create(org=org, name=f"field_{n}", label=f"Field {n}", type="string", location_ids=[location.id])
        call = _call_with_everything(org, location, f"+1415555020{n}",
                                     calendar_create(org=org, name=f"Calendar {n}", location=location,
                                                     weekly_hours=hours))
        runtime = Runtime(org)
        assert runtime.event(call.runtime_call_id, type="escalation_triggered", label="esc", data={
            "rule_id": str(rule.id), "triggered_by": "keyword", "context": "x"}).status_code == 201
        Message.objects.create(organization=org, call=call, message="Hello")
    return l3


@pytest.mark.parametrize("path", LISTS)
def test_a_scoped_list_is_a_constant_number_of_queries(org, admin, l1, two_of_each_at_l1, path):
    client = limited_client(org, [l1.id, two_of_each_at_l1.id], admin=admin)
    counts, sizes = queries_per_page(client, path, (1, 2))
    assert sizes == [1, 2], sizes
    assert counts[0] == counts[1]


def test_call_fields_of_all_locations_are_read_and_not_changed(l1_api, org, l1, l2):
    everywhere = call_field_create(org=org, name="party_size", label="Party size", type="number")
    shared = call_field_create(org=org, name="allergies", label="Allergies", type="string",
                               location_ids=[l1.id, l2.id])
    assert {row["id"] for row in l1_api.get("/v1/call-fields").json()["data"]} == {str(everywhere.pk), str(shared.pk)}
    before = snapshot()
    expected = (403, forbidden(l1, "call fields of other or all locations"))
    for response in (
        l1_api.patch(f"/v1/call-fields/{shared.pk}", {"label": "x"}, format="json"),
        l1_api.post("/v1/call-fields", {"name": "seats", "label": "Seats", "type": "number"}, format="json"),
    ):
        assert (response.status_code, response.json()) == expected
    assert snapshot() == before
    response = l1_api.post("/v1/call-fields", {"name": "seats", "label": "Seats", "type": "number",
                                               "location_ids": [str(l1.id)]}, format="json")
    assert response.status_code == 201


def test_an_l1_key_reads_the_team_members_of_l1(l1_api, org, l1, l2):
    routed_here = team_member_create(org=org, name="Routed to at L1")
    escalation_rule_create(org=org, name="L1 rule", destination_type="team_member",
                           destination_team_member=routed_here, keywords=["x"], location=l1)
    routed_there = team_member_create(org=org, name="Routed to at L2")
    escalation_rule_create(org=org, name="L2 rule", destination_type="team_member",
                           destination_team_member=routed_there, keywords=["x"], location=l2)
    manager = MembershipFactory(organization=org, role="location_manager", location_ids=[l1.id])
    platform = team_member_create(org=org, name="L1 manager", user=manager.user)
    team_member_create(org=org, name="Nobody's")
    listed = {row["name"] for row in l1_api.get("/v1/team-members").json()["data"]}
    assert listed == {"Routed to at L1", "L1 manager"}
    assert l1_api.get(f"/v1/team-members/{platform.pk}").status_code == 200
    assert l1_api.get(f"/v1/team-members/{routed_there.pk}").json() == NOT_FOUND


def test_an_l1_key_works_at_l1(l1_api, org, l1, calls):
    at_l1 = calls[0]
    booking = Booking.objects.get(call=at_l1)
    assert l1_api.post(f"/v1/bookings/{booking.pk}/cancel", {}, format="json").status_code == 200
    assert l1_api.patch(f"/v1/contacts/{at_l1.contact_id}", {"name": "Jo"}, format="json").status_code == 200
    rule = l1_api.post("/v1/escalation-rules", {
        "name": "L1 rule", "keywords": ["x"], "destination_type": "phone", "destination_phone": "+14155550100",
        "location_id": str(l1.id)}, format="json")
    assert rule.status_code == 201
    assert l1_api.patch(f"/v1/escalation-rules/{rule.json()['data']['id']}", {"enabled": False},
                        format="json").status_code == 200
    calendar = l1_api.post("/v1/calendars", {"name": "L1 chairs", "timezone": "UTC", "location_id": str(l1.id)},
                           format="json")
    assert calendar.status_code == 201
    assert l1_api.delete(f"/v1/calendars/{calendar.json()['data']['id']}").status_code == 204
    fact = l1_api.post("/v1/facts", {"label": "Parking", "content": "Free", "location_id": str(l1.id)},
                       format="json")
    assert l1_api.put(f"/v1/facts/{fact.json()['data']['id']}", {
        "label": "Parking", "content": "Paid", "location_id": str(l1.id)}, format="json").status_code == 200
    assert l1_api.delete(f"/v1/facts/{fact.json()['data']['id']}").status_code == 204


def test_no_filter_or_search_of_the_calls_reaches_l2(l1_api, l2, calls):
    at_l1, at_l2 = calls
    for params in ({"location_id": str(l2.id)}, {"contact_id": str(at_l2.contact_id)}):
        assert l1_api.get("/v1/calls", params).json()["data"] == [], params
    summary_word = at_l2.summary.split()[0]
    assert [row["id"] for row in l1_api.get("/v1/calls", {"q": summary_word}).json()["data"]] == [str(at_l1.pk)]
    for path in ("/v1/callbacks", "/v1/bookings", "/v1/orders"):
        assert str(at_l2.pk) not in l1_api.get(path, {"limit": 100}).content.decode(), path


def test_a_name_another_location_uses_is_no_409(l1_api, org, l1, l2):
    """Issue 35 item 11: no answer may reveal rows outside the scope. Names of facts, calendars and escalation rules
    are unique per location (and among the location-less ones), so a name only L2 uses is free at L1; a name the
    key can see taken (at L1, or org-wide for a location-less row) is still the 409."""
    fact_create(org=org, label="Hours", content="9-5", location=l2)
    calendar_create(org=org, name="Tables", timezone_name="UTC", location=l2)
    escalation_rule_create(org=org, name="Manager", destination_type="phone", destination_phone="+14155550100",
                           keywords=["manager"], location=l2)
    rule = {"keywords": ["x"], "destination_type": "phone", "destination_phone": "+14155550100"}
    creates = [("/v1/facts", {"label": "Hours", "content": "8-4"}, "label"),
               ("/v1/calendars", {"name": "Tables", "timezone": "UTC"}, "name"),
               ("/v1/escalation-rules", {"name": "Manager", **rule}, "name")]
    for path, body, field in creates:
        created = l1_api.post(path, {**body, "location_id": str(l1.id)}, format="json")
        assert created.status_code == 201, (path, created.content)
        again = l1_api.post(path, {**body, "location_id": str(l1.id)}, format="json")
        assert (again.status_code, again.json()["error"], again.json()["details"]["field"]) == (409, "conflict", field)
    assert Fact.objects.filter(organization=org, label="Hours").count() == 2
    # Call fields: a name is taken only where the lists of locations meet (null: every location), so L2's
    # `party_size` and `allergies` leave both names free at L1, for a create and for a rename.
    call_field_create(org=org, name="party_size", label="Party size", type="number", location_ids=[l2.id])
    call_field_create(org=org, name="allergies", label="Allergies", type="string", location_ids=[l2.id])
    at_l1 = {"label": "Guests", "type": "string", "location_ids": [str(l1.id)]}
    created = l1_api.post("/v1/call-fields", {"name": "party_size", **at_l1}, format="json")
    assert created.status_code == 201, created.content
    again = l1_api.post("/v1/call-fields", {"name": "party_size", **at_l1}, format="json")
    assert (again.status_code, again.json()) == (409, {"error": "conflict", "details": {"field": "name"}})
    seats = l1_api.post("/v1/call-fields", {"name": "seats", **at_l1}, format="json").json()["data"]
    renamed = l1_api.patch(f"/v1/call-fields/{seats['id']}", {"name": "allergies"}, format="json")
    assert (renamed.status_code, renamed.json()["data"]["name"]) == (200, "allergies")
    clash = l1_api.patch(f"/v1/call-fields/{seats['id']}", {"name": "party_size"}, format="json")
    assert (clash.status_code, clash.json()) == (409, {"error": "conflict", "details": {"field": "name"}})
    assert CallField.objects.filter(organization=org, name="party_size").count() == 2
    # A location-less row is seen beside every location's: its name is taken for each of them, and a
    # location-less name is taken by any location's row (only the whole organization writes those: no leak).
    fact_create(org=org, label="Parking", content="Free")
    clash = l1_api.post("/v1/facts", {"label": "Parking", "content": "Paid", "location_id": str(l1.id)},
                        format="json")
    assert (clash.status_code, clash.json()["details"]["field"]) == (409, "label")
    admin_api = org_client(org)
    for body in ({"label": "Parking", "content": "Paid"}, {"label": "Hours", "content": "Always"}):
        clash = admin_api.post("/v1/facts", body, format="json")
        assert (clash.status_code, clash.json()["details"]["field"]) == (409, "label"), body
    moved = admin_api.put(f"/v1/facts/{Fact.objects.get(label='Hours', location=l2).pk}",
                          {"label": "Hours", "content": "9-5"}, format="json")  # to no location: L1's clashes
    assert (moved.status_code, moved.json()["details"]["field"]) == (409, "label")
