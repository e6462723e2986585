"""Settings → Data & privacy → Redaction, and what the call page says was redacted."""

from audit.models import AuditEvent
from tests.support.runtime import Runtime

URL = "/settings/privacy/redaction/"


def test_admins_change_the_policy_and_it_is_audited(admin_client, org):
    page = admin_client.get(URL)
    assert page.status_code == 200 and 'data-testid="redaction-form"' in page.content.decode()
    response = admin_client.post(URL, {"kinds": ["card_number", "email"], "keep_recordings_with_sensitive_data": "on"})
    assert response.status_code == 302
    org.refresh_from_db()
    assert (org.redaction_kinds, org.keep_recordings_with_sensitive_data) == (["card_number", "email"], True)
    [entry] = AuditEvent.objects.filter(organization_id=org.pk, action="privacy.redaction_updated")
    assert entry.actor_type == "user"


def test_members_get_403_and_nothing_changes(member_client, org):
    assert member_client.get(URL).status_code == 403
    assert member_client.post(URL, {"kinds": []}).status_code == 403
    org.refresh_from_db()
    assert org.redaction_kinds == ["card_number", "government_id", "bank_account"]


def test_an_unknown_kind_is_shown_beside_the_field(admin_client, org):
    response = admin_client.post(URL, {"kinds": ["names"]})
    assert response.status_code == 200 and 'data-testid="error-kinds"' in response.content.decode()
    org.refresh_from_db()
    assert org.redaction_kinds == ["card_number", "government_id", "bank_account"]


def test_the_call_page_says_what_was_redacted_and_why_there_is_no_recording(admin_client, org):
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    turns = [{"speaker": "caller", "text": "it's 4111 1111 1111 1111", "offset_seconds": 1.0}]
    assert runtime.complete(call_id, transcript=turns, outcome="info").status_code == 200
    page = admin_client.get(f"/calls/{runtime.call(call_id).pk}").content.decode()
    assert "it&#x27;s [card_number]" in page or "it's [card_number]" in page
    assert 'data-testid="call-redaction"' in page and "1 × card number" in page
    assert 'data-testid="recording-withheld"' in page
    assert "4111" not in page
