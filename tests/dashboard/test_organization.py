"""Settings → Organization: admins change the settings through organization_update; members read them."""

import pytest

pytestmark = pytest.mark.django_db

URL = "/settings/"
VALID = {
    "name": "Acme Pizza & Pasta",
    "default_phone_region": "gb",
    "time_zone": "America/Los_Angeles",
    "auto_save_contacts": "",
    "call_recording_enabled": "on",
    "meetings_enabled": "on",
}


def test_admin_changes_the_settings(admin_client, org):
    response = admin_client.post(URL, {k: v for k, v in VALID.items() if v})
    assert response.status_code == 302
    org.refresh_from_db()
    assert org.name == "Acme Pizza & Pasta"
    assert org.default_phone_region == "GB"
    assert org.time_zone == "America/Los_Angeles"
    assert (org.auto_save_contacts, org.call_recording_enabled, org.meetings_enabled) == (False, True, True)


def test_the_form_starts_from_the_current_settings(admin_client, org):
    page = admin_client.get(URL).content.decode()
    assert 'value="Acme Pizza"' in page and 'value="US"' in page
    assert 'name="call_recording_enabled" id="id_call_recording_enabled" checked' in page


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"default_phone_region": "XX"}, "default_phone_region"),
        ({"default_phone_region": "USA"}, "default_phone_region"),
        ({"default_phone_region": ""}, "default_phone_region"),
        ({"time_zone": ""}, "time_zone"),
        ({"time_zone": "Mars/Olympus_Mons"}, "time_zone"),
    ],
)
def test_bad_settings_are_refused_inline_and_nothing_changes(admin_client, org, changes, field):
    response = admin_client.post(URL, {**VALID, **changes})
    assert response.status_code == 200
    assert f'data-testid="error-{field}"' in response.content.decode()
    org.refresh_from_db()
    assert (org.name, org.default_phone_region, org.meetings_enabled) == ("Acme Pizza", "US", False)


def test_members_read_the_settings_but_posting_gets_403(member_client, org):
    page = member_client.get(URL).content.decode()
    assert "Only an admin can change these settings." in page and "<form method=\"post\" class=\"form\"" not in page
    assert member_client.post(URL, VALID).status_code == 403
    org.refresh_from_db()
    assert (org.name, org.default_phone_region, org.meetings_enabled) == ("Acme Pizza", "US", False)


def test_an_unknown_time_zone_is_refused_with_its_message_beside_the_field(admin_client, org):
    response = admin_client.post(URL, {**VALID, "time_zone": "America/Springfield"})
    page = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="error-time_zone"' in page
    assert "Enter a valid IANA time zone, e.g. America/New_York." in page
    assert '<option value="America/Los_Angeles">' in page  # the picker offers the project's one list
    org.refresh_from_db()
    assert (org.time_zone, org.name) == ("UTC", "Acme Pizza")


def test_members_see_the_time_zone(member_client, org):
    org.time_zone = "Europe/Paris"
    org.save(update_fields=["time_zone"])
    assert 'data-testid="org-time-zone">Europe/Paris<' in member_client.get(URL).content.decode()
