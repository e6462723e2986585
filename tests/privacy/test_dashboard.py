"""Settings → Data & privacy and the call page's deletions: admins only, the same services as the API."""

import os
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from calls.models import Call
from privacy.models import ErasureRequest, RetentionPolicy, Suppression
from privacy.services import erasure_request_create
from tests.support.runtime import place_call

pytestmark = pytest.mark.django_db


def test_members_get_403_everywhere(member_client, org, runtime, party_size):
    call = place_call(runtime)
    suppression_request = erasure_request_create(org=org, phone_number="+14155550199", suppress=True)
    suppression = Suppression.objects.get(erasure_request=suppression_request)
    for method, path, body in (
        ("get", "/settings/privacy/", {}),
        ("post", "/settings/privacy/retention/", {"retention-recordings_days": "5"}),
        ("post", "/settings/privacy/erasures/", {"erasure-phone_number": "+14155550123"}),
        ("post", f"/settings/privacy/suppressions/{suppression.pk}/delete/", {}),
        ("get", f"/calls/{call.pk}/delete/content/", {}),
        ("post", f"/calls/{call.pk}/delete/content/", {}),
        ("post", f"/calls/{call.pk}/delete/recording/", {}),
    ):
        assert getattr(member_client, method)(path, body).status_code == 403
    assert Call.objects.get(pk=call.pk).content_deleted_at is None
    assert ErasureRequest.objects.count() == 1 and Suppression.objects.count() == 1
    assert not RetentionPolicy.objects.filter(organization=org).exists()


def test_the_page_says_nothing_expires_until_an_admin_chooses(admin_client, org):
    RetentionPolicy.objects.create(organization=org)
    page = admin_client.get("/settings/privacy/").content.decode()
    assert 'data-testid="nothing-expires"' in page
    assert 'href="/settings/privacy/redaction/"' in page


def test_an_admin_sets_retention_and_sees_the_next_runs_counts(admin_client, org, runtime, party_size, locations):
    place_call(runtime, started_at=timezone.now() - timedelta(days=50))
    place_call(runtime, started_at=timezone.now() - timedelta(days=50), location=locations[0])
    north = locations[0].pk
    response = admin_client.post("/settings/privacy/retention/", {
        "retention-recordings_days": "30", "retention-transcripts_days": "",
        f"retention-own_{north}": "on", f"retention-recordings_{north}": "", f"retention-transcripts_{north}": "10",
    })
    assert response.status_code == 302
    assert AuditEvent.objects.filter(action="retention.updated").count() == 1
    page = admin_client.get("/settings/privacy/")
    assert page.context["preview"] == {"transcripts": 1, "recordings": 1}
    assert 'data-testid="due-transcripts">1<' in page.content.decode()

    bad = admin_client.post("/settings/privacy/retention/", {"retention-recordings_days": "0"})
    assert bad.status_code == 400
    assert "retention-recordings_days" not in bad.content.decode() or "1 to 3,650" in bad.content.decode()
    assert RetentionPolicy.objects.get(organization=org).recordings_days == 30


def test_an_admin_erases_a_caller_and_removes_a_suppression(admin_client, org):
    response = admin_client.post("/settings/privacy/erasures/", {"erasure-phone_number": "(415) 555-0123",
                                                                 "erasure-suppress": "on"})
    assert response.status_code == 302
    request = ErasureRequest.objects.get(organization=org)
    page = admin_client.get("/settings/privacy/").content.decode()
    assert "+1•••••••0123" in page and "4155550123" not in page
    assert admin_client.post("/settings/privacy/erasures/", {"erasure-phone_number": "nope"}).status_code == 400
    suppression = Suppression.objects.get(erasure_request=request)
    assert admin_client.post(f"/settings/privacy/suppressions/{suppression.pk}/delete/").status_code == 302
    assert not Suppression.objects.exists()


def test_an_admin_deletes_a_calls_content_after_confirming(admin_client, runtime, party_size):
    call = place_call(runtime)
    path = call.recording.file.path
    page = admin_client.get(f"/calls/{call.pk}").content.decode()
    assert 'data-testid="delete-content"' in page and 'data-testid="delete-recording"' in page
    confirm = admin_client.get(f"/calls/{call.pk}/delete/content/")
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    assert Call.objects.get(pk=call.pk).content_deleted_at is None  # the confirmation page deletes nothing
    assert admin_client.post(f"/calls/{call.pk}/delete/content/").status_code == 302
    assert Call.objects.get(pk=call.pk).content_deleted_reason == "request"
    assert not os.path.exists(path)
    page = admin_client.get(f"/calls/{call.pk}").content.decode()
    assert 'data-testid="content-deleted"' in page and "pepperoni" not in page  # the contact's name is the CRM's
    assert admin_client.get(f"/calls/{call.pk}/delete/nothing/").status_code == 404
