"""The location scope (docs/api.md#locations-and-scope): a key limited to locations sees and changes only what is
at them, everything else answers like another organization's row."""

import pytest

from calls.models import Call
from core.errors import Conflict, NotFound, ValidationFailed
from knowledge.models import Fact
from knowledge.services import fact_create, location_delete
from orgs.models import Location, Membership
from orgs.tenancy import ScopeForbidden, get_for_org, scoped, whole_org
from tests.factories import MembershipFactory, make_key
from tests.support.clients import key_client
from tests.support.locations import make_location
from tests.support.runtime import Runtime


@pytest.fixture
def calls(org, l1, l2, settings):
    runtime = Runtime(org)
    at_l1, _ = runtime.start(location_id=l1.id, from_number="+14155550101")
    at_l2, _ = runtime.start(location_id=l2.id, from_number="+14155550102")
    return runtime.call(at_l1), runtime.call(at_l2)


def test_for_org_through_a_scope_narrows_to_its_locations(org, l1, l2, calls):
    at_l1, at_l2 = calls
    assert list(Call.objects.for_org(scoped(org, [l1.id]))) == [at_l1]
    assert set(Call.objects.for_org(org)) == {at_l1, at_l2}
    assert set(Call.objects.for_org(whole_org(scoped(org, [l1.id])))) == {at_l1, at_l2}
    assert list(Location.objects.for_org(scoped(org, [l1.id]))) == [l1]


def test_get_for_org_outside_the_scope_is_not_found_and_the_row_carries_the_scope(org, l1, calls):
    at_l1, at_l2 = calls
    scope = scoped(org, [l1.id])
    with pytest.raises(NotFound):
        get_for_org(Call, scope, at_l2.pk)
    assert get_for_org(Call, scope, at_l1.pk).organization.scope_location_ids == frozenset({l1.id})


def test_a_location_less_fact_is_readable_but_not_writable_within_a_scope(org, l1):
    shared = fact_create(org=org, label="Hours", content="9-5")
    scope = scoped(org, [l1.id])
    assert list(Fact.objects.for_org(scope)) == [shared]
    with pytest.raises(ScopeForbidden):
        fact_create(org=scope, label="Other", content="x")
    assert Fact.objects.count() == 1


def test_a_scoped_key_is_shown_by_me(org, admin, l1, l2):
    key, plaintext = make_key(org, admin=admin, location_ids=[str(l2.id), str(l1.id)])
    assert key_client(plaintext).get("/v1/me").json()["data"]["location_ids"] == [str(l2.id), str(l1.id)]


@pytest.mark.parametrize(("location_ids", "message"), [
    ([], "Give a non-empty list of location ids, or null for every location."),
    ("L1", "Give a non-empty list of location ids, or null for every location."),
    (["nope"], "Not a location of this organization: nope."),
])
def test_bad_location_ids_are_400_and_create_no_key(org, admin, location_ids, message):
    with pytest.raises(ValidationFailed) as raised:
        make_key(org, admin=admin, location_ids=location_ids)
    assert raised.value.details == {"formErrors": [], "fieldErrors": {"location_ids": [message]}}


def test_repeated_or_foreign_locations_are_400(org, other_org, admin, l1):
    foreign = make_location(other_org, "Elsewhere")
    with pytest.raises(ValidationFailed) as raised:
        make_key(org, admin=admin, location_ids=[l1.id, l1.id])
    assert raised.value.details["fieldErrors"] == {"location_ids": ["Location ids must not repeat."]}
    with pytest.raises(ValidationFailed) as raised:
        make_key(org, admin=admin, location_ids=[l1.id, foreign.id])
    assert raised.value.details["fieldErrors"] == {
        "location_ids": [f"Not a location of this organization: {foreign.id}."]}


def test_a_location_a_key_or_member_is_limited_to_cannot_be_deleted(org, admin, l1):
    key, _ = make_key(org, admin=admin, name="Downtown POS", location_ids=[l1.id])
    with pytest.raises(Conflict) as raised:
        location_delete(location=l1)
    assert raised.value.field == "api_keys"
    assert "Downtown POS" in raised.value.message
    key.revoked_at = key.created_at
    key.save(update_fields=["revoked_at"])
    MembershipFactory(organization=org, role=Membership.Role.MEMBER, location_ids=[l1.id])
    with pytest.raises(Conflict) as raised:
        location_delete(location=l1)
    assert raised.value.field == "memberships"
    assert Location.objects.filter(pk=l1.pk).exists()
