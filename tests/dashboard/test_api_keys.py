"""Settings → API keys: the list, create (plaintext shown once), revoke; admins only for writes."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from knowledge.services import location_create
from orgs.keys import KEY_PATTERN, digest_key
from orgs.models import ApiKey, Location
from tests.support.accounts import session_rows

pytestmark = pytest.mark.django_db

CREATED_URL = "/settings/api-keys/created/"


def create(client, name="CRM sync", scope="read_write"):
    return client.post("/settings/api-keys/new/", {"name": name, "scope": scope})


def plaintext_on(page: str) -> str | None:
    marker = 'data-testid="api-key-plaintext">'
    if marker not in page:
        return None
    return page.split(marker, 1)[1].split("<", 1)[0]


def test_admin_creates_a_key_and_sees_its_plaintext_once(admin_client, admin, org):
    response = create(admin_client)
    # The plaintext never travels in a URL: the redirect goes to a fixed address.
    assert response.status_code == 302 and response["Location"] == CREATED_URL

    page = admin_client.get(CREATED_URL)
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    plaintext = plaintext_on(page.content.decode())
    assert plaintext and KEY_PATTERN.match(plaintext)
    assert "will not be shown again" in page.content.decode()
    assert 'data-copy-target="new-key"' in page.content.decode()

    key = ApiKey.objects.get()
    assert (key.organization, key.created_by, key.name, key.scope) == (org, admin, "CRM sync", "read_write")
    assert key.key_digest == digest_key(plaintext) and key.key_prefix == plaintext[:12]

    # Shown once: the session no longer holds it, and a second visit goes back to the list without it.
    assert plaintext not in str(dict(admin_client.session))
    again = admin_client.get(CREATED_URL, follow=True)
    assert again.redirect_chain == [("/settings/api-keys/", 302)]
    assert plaintext not in again.content.decode()
    assert "shown only once" in again.content.decode()


def test_the_list_shows_the_prefix_and_never_the_plaintext(admin_client, member_client, admin):
    create(admin_client, name="Read only", scope="read")
    plaintext = plaintext_on(admin_client.get(CREATED_URL).content.decode())
    for client in (admin_client, member_client):
        page = client.get("/settings/api-keys/").content.decode()
        assert plaintext not in page
        assert f"{plaintext[:12]}…" in page
        assert plaintext[:13] not in page
        assert "Read only" in page and admin.email in page and "Never" in page and "Active" in page


def test_a_created_key_works_on_the_api_and_stops_at_revocation(admin_client):
    create(admin_client)
    plaintext = plaintext_on(admin_client.get(CREATED_URL).content.decode())
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    me = api.get("/v1/me")
    assert me.status_code == 200 and me.json()["data"]["scopes"] == ["read", "write"]

    key = ApiKey.objects.get()
    assert admin_client.post(f"/settings/api-keys/{key.pk}/revoke/").status_code == 302
    assert api.get("/v1/me").status_code == 401


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "", "scope": "read"}, "name", "This field is required."),
        ({"name": "   ", "scope": "read"}, "name", "This field is required."),
        ({"name": "x" * 201, "scope": "read"}, "name", "at most 200 characters"),
        ({"name": "ok", "scope": "admin"}, "scope", "Select a valid choice."),
        ({"name": "ok"}, "scope", "This field is required."),
    ],
)
def test_create_rejects_bad_input_inline_and_writes_nothing(admin_client, data, field, message):
    response = admin_client.post("/settings/api-keys/new/", data)
    assert response.status_code == 200
    page = response.content.decode()
    assert f'data-testid="error-{field}"' in page and message in page
    assert 'aria-invalid="true"' in page
    assert ApiKey.objects.count() == 0
    assert "dashboard.once" not in admin_client.session


def test_a_plaintext_not_viewed_at_once_is_dropped_by_the_next_page(admin_client):
    create(admin_client)
    assert "dashboard.once" in admin_client.session
    admin_client.get("/settings/api-keys/")
    assert "dashboard.once" not in admin_client.session
    assert plaintext_on(admin_client.get(CREATED_URL, follow=True).content.decode()) is None
    assert ApiKey.objects.count() == 1


def test_a_member_posting_create_gets_403_and_no_key(member_client):
    response = create(member_client)
    assert response.status_code == 403
    assert ApiKey.objects.count() == 0
    assert member_client.get(CREATED_URL).status_code == 403


def test_only_admins_see_create_and_revoke_controls(admin_client, member_client, write_key):
    admin_page = admin_client.get("/settings/api-keys/").content.decode()
    member_page = member_client.get("/settings/api-keys/").content.decode()
    for control in ('data-testid="create-api-key"', 'data-testid="revoke-api-key"'):
        assert control in admin_page
        assert control not in member_page


def test_revoke_asks_for_confirmation_first(admin_client, write_key):
    key, _ = write_key
    page = admin_client.get(f"/settings/api-keys/{key.pk}/revoke/")
    assert page.status_code == 200 and 'data-testid="confirm-revoke"' in page.content.decode()
    key.refresh_from_db()
    assert key.is_active


def test_admin_revokes_a_key(admin_client, admin, write_key):
    key, _ = write_key
    response = admin_client.post(f"/settings/api-keys/{key.pk}/revoke/", follow=True)
    assert response.redirect_chain == [("/settings/api-keys/", 302)]
    assert "Revoked" in response.content.decode()
    key.refresh_from_db()
    assert key.revoked_at is not None and key.revoked_by == admin
    revoked_at = key.revoked_at
    # Revoking again changes nothing.
    admin_client.post(f"/settings/api-keys/{key.pk}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at == revoked_at


def test_a_member_posting_revoke_gets_403_and_the_key_stays_active(member_client, write_key, api):
    key, _ = write_key
    response = member_client.post(f"/settings/api-keys/{key.pk}/revoke/")
    assert response.status_code == 403
    key.refresh_from_db()
    assert key.is_active and key.revoked_by is None
    assert api.get("/v1/me").status_code == 200


def test_another_orgs_admin_posting_revoke_gets_404_and_the_key_stays_active(outsider_client, write_key):
    key, _ = write_key
    assert outsider_client.post(f"/settings/api-keys/{key.pk}/revoke/").status_code == 404
    key.refresh_from_db()
    assert key.is_active


def test_forms_without_a_csrf_token_are_refused(admin, write_key):
    from tests.support.clients import PASSWORD

    client = Client(enforce_csrf_checks=True)
    assert client.login(username=admin.username, password=PASSWORD)
    assert create(client).status_code == 403
    key, _ = write_key
    assert client.post(f"/settings/api-keys/{key.pk}/revoke/").status_code == 403
    assert ApiKey.objects.count() == 1
    key.refresh_from_db()
    assert key.is_active
    assert 'name="csrfmiddlewaretoken"' in client.get("/settings/api-keys/new/").content.decode()


def test_the_session_store_never_holds_the_plaintext(admin_client):
    """The DB session backend writes session data as signed, readable JSON: the pending key is sealed."""
    create(admin_client)
    while_pending = session_rows()
    assert any("dashboard.once" in row for row in while_pending)  # something is pending, sealed

    page = admin_client.get(CREATED_URL)
    plaintext = plaintext_on(page.content.decode())
    assert plaintext and KEY_PATTERN.match(plaintext)  # still shown, once
    for row in [*while_pending, *session_rows()]:
        assert plaintext not in row and plaintext[12:] not in row
    assert admin_client.get(CREATED_URL).status_code == 302


def _locations(org):
    return [location_create(org=org, name=name, timezone="UTC") for name in ("Downtown", "Uptown")]


def test_admin_creates_a_key_limited_to_locations(admin_client, org):
    downtown, uptown = _locations(org)
    form = admin_client.get("/settings/api-keys/new/").content.decode()
    assert "Downtown" in form and "Uptown" in form and "None checked: the whole organization." in form
    response = admin_client.post("/settings/api-keys/new/", {"name": "POS", "scope": "read_write",
                                                              "location_ids": [str(uptown.pk)]})
    assert response.status_code == 302
    assert ApiKey.objects.get().location_ids == [uptown.pk]
    plaintext = plaintext_on(admin_client.get(CREATED_URL).content.decode())
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert client.get("/v1/me").json()["data"]["location_ids"] == [str(uptown.pk)]
    row = admin_client.get("/settings/api-keys/").content.decode().split('data-testid="api-key-locations">')[1]
    assert row.startswith("Uptown</td>")


def test_a_key_without_locations_is_the_whole_organizations(admin_client, org):
    _locations(org)
    create(admin_client)
    assert ApiKey.objects.get().location_ids is None
    row = admin_client.get("/settings/api-keys/").content.decode().split('data-testid="api-key-locations">')[1]
    assert row.startswith('<span class="subtle">All</span>')


def test_another_orgs_location_is_refused_beside_the_field(admin_client, org, other_org):
    _locations(org)
    foreign = _locations(other_org)[0]
    response = admin_client.post("/settings/api-keys/new/", {"name": "POS", "scope": "read",
                                                              "location_ids": [str(foreign.pk)]})
    assert response.status_code == 200
    assert "Select a valid choice." in response.content.decode()
    assert not ApiKey.objects.exists()


def test_a_member_cannot_create_a_scoped_key(member_client, org):
    downtown, _ = _locations(org)
    response = member_client.post("/settings/api-keys/new/", {"name": "POS", "scope": "read",
                                                               "location_ids": [str(downtown.pk)]})
    assert response.status_code == 403
    assert not ApiKey.objects.exists()


def test_a_location_a_key_is_limited_to_is_not_deleted(admin_client, org):
    downtown, _ = _locations(org)
    admin_client.post("/settings/api-keys/new/", {"name": "Downtown POS", "scope": "read",
                                                  "location_ids": [str(downtown.pk)]})
    page = admin_client.post(f"/locations/{downtown.pk}/delete/", follow=True).content.decode()
    assert "API keys are limited to this location: Downtown POS. Revoke them or change their locations first." in page
    assert Location.objects.filter(pk=downtown.pk).exists()
