"""Settings → Organization: admins change the settings through organization_update; members read them."""

import pytest

pytestmark = pytest.mark.django_db

URL = "/settings/"
VALID = {
    "name": "Acme Pizza & Pasta",
    "default_phone_region": "gb",
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
