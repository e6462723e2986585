"""One knowledge version and one ETag format (orgs.selectors) for the runtime's knowledge read, its 304 check
and the dashboard; one `_update` shape for the knowledge writes; one set of field validators with contacts."""

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from contacts import services as contact_services
from core.errors import Conflict, Forbidden, ValidationFailed
from core.validation import check_email, check_lengths, optional_text
from knowledge import selectors, services
from knowledge import selectors as call_selectors
from orgs.models import Organization
from tests.support.knowledge import knowledge_version


def _runtime_knowledge(org, etag=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {settings.AGENT_RUNTIME_TOKEN}")
    headers = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
    return client.get(f"/internal/agent/v1/orgs/{org.pk}/knowledge", **headers)


def test_the_orgs_selectors_the_runtime_and_its_304_check_give_one_etag(org, fact):
    org = Organization.objects.get(pk=org.pk)
    etag = selectors.knowledge_etag(org)
    assert selectors.knowledge_for_org(org)[0] == etag
    assert call_selectors.runtime_knowledge_etag(org=org) == etag
    assert call_selectors.runtime_knowledge(org=org)[0] == etag
    response = _runtime_knowledge(org)
    assert response.status_code == 200 and response["ETag"] == etag
    assert _runtime_knowledge(org, etag).status_code == 304


def test_the_etag_names_the_version_and_changes_with_the_org_settings(org):
    org = Organization.objects.get(pk=org.pk)
    before = selectors.knowledge_etag(org)
    assert before.startswith(f'"knowledge-{selectors.knowledge_version(org)}.')
    org.auto_save_contacts = not org.auto_save_contacts
    org.save(update_fields=["auto_save_contacts", "updated_at"])
    assert selectors.knowledge_etag(org) != before
    assert selectors.knowledge_version(org) == knowledge_version(org)


def test_the_knowledge_version_reads_the_database_not_the_loaded_org(org):
    services.fact_create(org=org, label="A", content="a")
    assert selectors.knowledge_version(org) == knowledge_version(org) == org.knowledge_version + 1


@pytest.mark.parametrize(
    ("update", "target", "changes", "field"),
    [
        (services.location_update, "location", {"name": "Uptown"}, "name"),
        (services.fact_update, "fact", {"label": "Taken"}, "label"),
    ],
)
def test_an_update_that_clashes_is_409_and_bumps_nothing(org, location, fact, update, target, changes, field):
    services.location_create(org=org, name="Uptown", address="a", timezone="UTC", phone_number="+14155550100")
    services.fact_create(org=org, label="Taken", content="c")
    before = knowledge_version(org)
    with pytest.raises(Conflict) as caught:
        update(**{target: {"location": location, "fact": fact}[target]}, **changes)
    assert caught.value.field == field
    assert knowledge_version(org) == before


def test_an_update_cleans_what_it_is_given_and_keeps_the_rest(org, team_member):
    before = knowledge_version(org)
    services.team_member_update(member=team_member, role="  ")
    team_member.refresh_from_db()
    assert team_member.role is None and team_member.name == "Dana Cook"
    assert knowledge_version(org) == before + 1


def test_an_update_refuses_unknown_fields_and_bumps_nothing(org, location):
    before = knowledge_version(org)
    with pytest.raises(ValidationFailed):
        services.location_update(location=location, color="red")
    assert knowledge_version(org) == before


def test_a_team_member_update_no_longer_takes_allow_platform_user(org, platform_member):
    with pytest.raises(Forbidden):
        services.team_member_update(member=platform_member, name="x", allow_platform_user=True)
    platform_member.refresh_from_db()
    assert platform_member.name == "Pat Platform"


def test_the_shared_validators():
    assert optional_text("  ") is None and optional_text(" a ") == "a" and optional_text(None) is None
    check_lengths({"name": "x" * 200, "other": "y" * 999}, {"name": 200})
    with pytest.raises(ValidationFailed) as caught:
        check_lengths({"name": "x" * 201}, {"name": 200})
    assert caught.value.details["fieldErrors"] == {"name": ["Ensure this field has no more than 200 characters."]}
    check_email(None)
    with pytest.raises(ValidationFailed) as caught:
        check_email("not-an-email")
    assert caught.value.details["fieldErrors"] == {"email": ["Enter a valid email address."]}


def test_contacts_and_team_members_report_a_bad_email_and_a_long_name_the_same_way(org):
    errors = []
    for create in (
        lambda **kw: contact_services.contact_create(org=org, phone_number="+14155550100", source="api", **kw),
        lambda **kw: services.team_member_create(org=org, **{"name": "N", **kw}),
    ):
        for kwargs in ({"email": "nope"}, {"name": "n" * 201}):
            with pytest.raises(ValidationFailed) as caught:
                create(**kwargs)
            errors.append(caught.value.details["fieldErrors"])
    assert errors[:2] == errors[2:]
