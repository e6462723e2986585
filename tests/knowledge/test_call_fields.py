"""Call field definitions through the knowledge write path: cleaned and checked as a whole, the name unique where
the fields' locations meet, every write bumping the knowledge version once with its audit entry, `location_ids` only
this org's locations, and the fields that apply to a call's location."""

import pytest

from audit.models import AuditEvent
from core.errors import Conflict, ValidationFailed
from knowledge import selectors, services
from knowledge.models import CallField
from tests.support.knowledge import knowledge_version


def _field(org, name="party_size", **extra):
    values = {"label": "Party size", "type": "number", **extra}
    return services.call_field_create(org=org, name=name, **values)


def _errors(caught) -> dict:
    return caught.value.details["fieldErrors"]


@pytest.fixture
def location(org):
    return services.location_create(org=org, name="Downtown", address="1 Market St", timezone="America/Los_Angeles",
                                    phone_number="+14155550100")


@pytest.fixture
def other_location(other_org):
    return services.location_create(org=other_org, name="Elsewhere", address="2 Main St", timezone="Europe/Paris",
                                    phone_number="+33142685300")


def test_create_update_delete_bump_the_version_once_each_and_are_audited(org):
    before = knowledge_version(org)
    field = _field(org, description="How many people the table is for.")
    assert knowledge_version(org) == before + 1
    saved = services.call_field_update(call_field=field, label="Guests")
    assert knowledge_version(org) == before + 2
    services.call_field_delete(call_field=saved)
    assert knowledge_version(org) == before + 3
    # In any order: chain_seq is set once the chain is sealed (after commit), occurred_at kept to the millisecond.
    actions = AuditEvent.objects.filter(organization_id=org.pk, action__startswith="call_field.")
    assert sorted(actions.values_list("action", flat=True)) == [
        "call_field.created", "call_field.deleted", "call_field.updated"]


def test_a_name_taken_for_every_location_is_conflict_and_another_org_may_use_it(org, other_org):
    _field(org)
    before = knowledge_version(org)
    with pytest.raises(Conflict) as caught:
        _field(org)
    assert caught.value.field == "name"
    assert knowledge_version(org) == before
    assert _field(other_org).name == "party_size"


@pytest.mark.parametrize(("first", "second", "meets"), [
    ("every", "every", True),
    ("every", "a", True),
    ("a", "every", True),
    ("a", "a", True),
    ("ab", "bc", True),
    ("a", "b", False),
    ("ab", "c", False),
])
def test_one_name_is_taken_only_where_the_locations_meet(org, first, second, meets):
    """Null (every location) meets every list; two lists meet when they share a location. Checked on create and on
    an update that renames or moves a field, its own row aside."""
    places = {letter: services.location_create(org=org, name=letter, address="x", timezone="UTC",
                                               phone_number="+14155550100").pk for letter in "abc"}

    def ids(spec):
        return None if spec == "every" else [places[letter] for letter in spec]

    _field(org, location_ids=ids(first))
    if meets:
        before = knowledge_version(org)
        with pytest.raises(Conflict) as caught:
            _field(org, location_ids=ids(second))
        assert (caught.value.field, str(caught.value)) == (
            "name", "A call field with this name already applies to one of these locations.")
        assert knowledge_version(org) == before
        elsewhere = _field(org, name="seats", location_ids=ids(second))
        with pytest.raises(Conflict):
            services.call_field_update(call_field=elsewhere, name="party_size")
        assert CallField.objects.get(pk=elsewhere.pk).name == "seats"
    else:
        second_field = _field(org, location_ids=ids(second))
        assert services.call_field_update(call_field=second_field, label="Again").label == "Again"
        with pytest.raises(Conflict):
            services.call_field_update(call_field=second_field, location_ids=ids(first))
    assert CallField.objects.filter(organization=org, name="party_size").count() == (1 if meets else 2)


def test_a_list_emptied_by_deleted_locations_meets_none(org, location):
    emptied = _field(org, location_ids=[location.pk])
    services.location_delete(location=location)
    everywhere = _field(org)
    assert {field.pk for field in CallField.objects.filter(organization=org, name="party_size")} == {
        emptied.pk, everywhere.pk}


@pytest.mark.parametrize(("values", "errors"), [
    ({"name": "Party Size"}, {"name": ["Use 1 to 64 lowercase letters, digits and underscores, starting with a "
                                       "letter."]}),
    ({"name": "a" * 65}, {"name": ["Ensure this field has no more than 64 characters."]}),
    ({"name": ""}, {"name": ["This field may not be blank."]}),
    ({"label": " "}, {"label": ["This field may not be blank."]}),
    ({"description": "x" * 1001}, {"description": ["Ensure this field has no more than 1000 characters."]}),
    ({"type": "money"}, {"type": ["Must be one of: string, number, boolean, date, enum."]}),
    ({"type": "enum"}, {"choices": ["An enum field needs 1 to 50 choices."]}),
    ({"type": "enum", "choices": ["a", "a"]}, {"choices": ["Choices must not repeat."]}),
    ({"type": "enum", "choices": [str(n) for n in range(51)]},
     {"choices": ["Ensure this field has no more than 50 elements."]}),
    ({"type": "enum", "choices": [""]}, {"choices": ["Each choice must be 1 to 200 characters."]}),
    ({"type": "string", "choices": ["a"]}, {"choices": ["Only an enum field has choices."]}),
    ({"location_ids": []}, {"location_ids": ["Give a non-empty list of location ids, or null for every location."]}),
    ({"location_ids": ["nope"]}, {"location_ids": ["Not a location of this organization: nope."]}),
])
def test_bad_definitions_are_refused_with_their_field_and_nothing_is_stored(org, values, errors):
    with pytest.raises(ValidationFailed) as caught:
        _field(org, **{"name": "party_size", **values})
    assert _errors(caught) == errors
    assert not CallField.objects.filter(organization=org).exists()


def test_location_ids_must_be_this_orgs_locations_without_repeats(org, location, other_location):
    with pytest.raises(ValidationFailed) as caught:
        _field(org, location_ids=[str(other_location.pk)])
    assert _errors(caught) == {"location_ids": [f"Not a location of this organization: {other_location.pk}."]}
    with pytest.raises(ValidationFailed) as caught:
        _field(org, location_ids=[location.pk, location.pk])
    assert _errors(caught) == {"location_ids": ["Location ids must not repeat."]}
    assert _field(org, location_ids=[str(location.pk)]).location_ids == [location.pk]


def test_the_fields_that_apply_follow_the_calls_location(org, location):
    services.location_create(org=org, name="Uptown", address="a", timezone="UTC", phone_number="+14155550101")
    everywhere = _field(org, name="party_size")
    here = _field(org, name="high_chair", type="boolean", location_ids=[location.pk])
    assert list(selectors.call_fields_that_apply(org=org, location_id=location.pk)) == [here, everywhere]
    assert list(selectors.call_fields_that_apply(org=org, location_id=None)) == [everywhere]


def test_a_deleted_location_leaves_the_fields_that_named_it(org, location):
    field = _field(org, location_ids=[location.pk])
    services.location_delete(location=location)
    field.refresh_from_db()
    assert field.location_ids == []
    assert list(selectors.call_fields_that_apply(org=org, location_id=location.pk)) == []


def test_an_update_to_enum_needs_choices_checked_against_the_whole_field(org):
    field = _field(org, name="seating", type="string")
    with pytest.raises(ValidationFailed) as caught:
        services.call_field_update(call_field=field, type="enum")
    assert _errors(caught) == {"choices": ["An enum field needs 1 to 50 choices."]}
    saved = services.call_field_update(call_field=field, type="enum", choices=["inside", "patio"])
    assert (saved.type, saved.choices) == ("enum", ["inside", "patio"])
    assert field.type == "string"


def test_the_runtimes_knowledge_carries_the_fields_with_their_locations(org, location):
    _field(org, location_ids=[location.pk], required=True)
    _, data = selectors.runtime_knowledge(org=org)
    [shown] = data["call_fields"]
    assert {key: shown[key] for key in ("name", "label", "type", "choices", "required", "location_ids")} == {
        "name": "party_size", "label": "Party size", "type": "number", "choices": [], "required": True,
        "location_ids": [str(location.pk)]}
