"""Locations and team pages: members read; admins create, edit and delete; another org's rows are 404; a team
member who is a platform user is shown locked and refused (403) even to an admin who posts anyway."""

import uuid

import pytest

from knowledge.models import Fact, TeamMember
from knowledge.services import fact_create, location_create, team_member_create
from orgs.models import Location, Organization

pytestmark = pytest.mark.django_db

LOCATION = {"name": "Uptown", "address": "5 High St", "timezone": "Europe/London", "phone_number": "+442071838750"}


@pytest.fixture
def location(org):
    return location_create(org=org, name="Downtown", address="1 Main St", timezone="America/New_York",
                           phone_number="+14155550100")


@pytest.fixture
def team_member(org):
    return team_member_create(org=org, name="Maria Lopez", role="Manager", email="maria@example.com")


@pytest.fixture
def platform_member(org, admin):
    return team_member_create(org=org, name="The Owner", role="Owner", user=admin)


def version(org) -> int:
    return Organization.objects.get(pk=org.pk).knowledge_version


def test_anonymous_visitors_are_sent_to_log_in(client, location, team_member):
    for path in ["/locations/", "/locations/new/", f"/locations/{location.pk}/edit/",
                 f"/locations/{location.pk}/delete/", "/team/", "/team/new/", f"/team/{team_member.pk}/edit/",
                 f"/team/{team_member.pk}/delete/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/?next="), path


def test_members_read_without_write_controls_and_get_403_on_writes(member_client, org, location, team_member):
    for path, text in [("/locations/", "Downtown"), ("/team/", "Maria Lopez")]:
        body = member_client.get(path).content.decode()
        assert text in body and "/edit/" not in body and "/delete/" not in body and "/new/" not in body
    before = version(org)
    for method, path, data in [
        ("get", "/locations/new/", None), ("post", "/locations/new/", LOCATION),
        ("post", f"/locations/{location.pk}/edit/", LOCATION), ("post", f"/locations/{location.pk}/delete/", None),
        ("get", "/team/new/", None), ("post", "/team/new/", {"name": "Sneaky"}),
        ("post", f"/team/{team_member.pk}/edit/", {"name": "Sneaky"}),
        ("post", f"/team/{team_member.pk}/delete/", None),
    ]:
        assert getattr(member_client, method)(path, data or {}).status_code == 403, path
    assert list(Location.objects.values_list("name", flat=True)) == ["Downtown"]
    assert list(TeamMember.objects.values_list("name", flat=True)) == ["Maria Lopez"]
    assert version(org) == before


def test_another_orgs_rows_are_404(outsider_client, location, team_member):
    for path in [f"/locations/{location.pk}/edit/", f"/locations/{location.pk}/delete/",
                 f"/team/{team_member.pk}/edit/", f"/team/{team_member.pk}/delete/"]:
        assert outsider_client.get(path).status_code == 404
        assert outsider_client.get(path.replace(path.split("/")[2], str(uuid.uuid4()))).status_code == 404
        assert outsider_client.post(path, {"name": "Hacked", **{k: v for k, v in LOCATION.items() if k != "name"}}
                                    ).status_code == 404
    assert Location.objects.get(pk=location.pk).name == "Downtown"
    assert TeamMember.objects.get(pk=team_member.pk).name == "Maria Lopez"
    assert "Downtown" not in outsider_client.get("/locations/").content.decode()
    assert "Maria Lopez" not in outsider_client.get("/team/").content.decode()


def test_admin_creates_edits_and_deletes_a_location(admin_client, org, location):
    created = admin_client.post("/locations/new/", {**LOCATION, "phone_number": "020 7183 8750"})
    assert created.status_code == 200  # the org's region is US: a UK number without +44 is not valid
    assert created.context["form"].errors["phone_number"]
    created = admin_client.post("/locations/new/", LOCATION)
    assert created.status_code == 302
    uptown = Location.objects.get(name="Uptown")
    assert uptown.phone_number == "+442071838750"

    edit = admin_client.post(f"/locations/{uptown.pk}/edit/", {**LOCATION, "address": "7 High St"})
    assert edit.status_code == 302
    assert Location.objects.get(pk=uptown.pk).address == "7 High St"

    fact = fact_create(org=org, label="Hours", content="9-5", location=location)
    confirm = admin_client.get(f"/locations/{location.pk}/delete/").content.decode()
    assert "“Hours”" in confirm and "apply to every location" in confirm
    assert admin_client.post(f"/locations/{location.pk}/delete/").status_code == 302
    assert not Location.objects.filter(pk=location.pk).exists()
    assert Fact.objects.get(pk=fact.pk).location_id is None


def test_location_bad_input_and_duplicate_name_are_refused_inline(admin_client, org, location):
    before = version(org)
    bad_tz = admin_client.post("/locations/new/", {**LOCATION, "timezone": "Mars/Olympus"})
    assert bad_tz.context["form"].errors["timezone"] == ["Enter a valid IANA time zone, e.g. America/New_York."]
    duplicate = admin_client.post("/locations/new/", {**LOCATION, "name": "Downtown"})
    assert duplicate.status_code == 200
    assert duplicate.context["form"].errors["name"] == ["A location with this name already exists."]
    assert 'data-testid="error-name"' in duplicate.content.decode()
    missing = admin_client.post("/locations/new/", {})
    assert set(missing.context["form"].errors) == {"name", "address", "timezone", "phone_number"}
    assert Location.objects.count() == 1 and version(org) == before
    # The time zone input offers the IANA names.
    assert '<option value="America/New_York">' in admin_client.get("/locations/new/").content.decode()


def test_admin_creates_edits_and_deletes_a_team_member(admin_client, org, team_member):
    bad = admin_client.post("/team/new/", {"name": "Sam", "email": "not-an-email", "phone_number": "12"})
    assert bad.status_code == 200 and set(bad.context["form"].errors) == {"email"}
    bad_phone = admin_client.post("/team/new/", {"name": "Sam", "phone_number": "12"})
    assert bad_phone.status_code == 200 and bad_phone.context["form"].errors["phone_number"]
    assert TeamMember.objects.count() == 1

    assert admin_client.post("/team/new/", {"name": "Sam Chen", "phone_number": "(415) 555-0112"}).status_code == 302
    sam = TeamMember.objects.get(name="Sam Chen")
    assert (sam.phone_number, sam.email, sam.role) == ("+14155550112", None, None)
    assert admin_client.post(f"/team/{sam.pk}/edit/", {"name": "Sam Chen", "role": "Chef"}).status_code == 302
    sam.refresh_from_db()
    assert (sam.role, sam.phone_number) == ("Chef", None)
    assert admin_client.get(f"/team/{sam.pk}/delete/").status_code == 200
    assert admin_client.post(f"/team/{sam.pk}/delete/").status_code == 302
    assert not TeamMember.objects.filter(pk=sam.pk).exists()


def test_a_platform_user_is_shown_locked_and_refused_even_to_admins(admin_client, platform_member, team_member):
    body = admin_client.get("/team/").content.decode()
    assert 'data-testid="team-member-locked"' in body
    assert f"/team/{platform_member.pk}/edit/" not in body and f"/team/{platform_member.pk}/delete/" not in body
    assert f"/team/{team_member.pk}/edit/" in body
    assert admin_client.get(f"/team/{platform_member.pk}/edit/").status_code == 403
    assert admin_client.post(f"/team/{platform_member.pk}/edit/", {"name": "Renamed"}).status_code == 403
    assert admin_client.post(f"/team/{platform_member.pk}/delete/").status_code == 403
    platform_member.refresh_from_db()
    assert platform_member.name == "The Owner"


def test_forms_have_labels_and_csrf(admin_client, location, team_member):
    for path, fields in [("/locations/new/", LOCATION), (f"/locations/{location.pk}/edit/", LOCATION),
                         ("/team/new/", ["name", "role", "email", "phone_number"])]:
        body = admin_client.get(path).content.decode()
        assert "csrfmiddlewaretoken" in body
        for field in fields:
            assert f'<label for="id_{field}"' in body, (path, field)
