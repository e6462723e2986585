from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from knowledge.models import CallField
from knowledge.services import call_field_create, location_create
from tests.calls.conftest import T0, TRANSCRIPT, Runtime, iso
from tests.factories import make_key
from tests.support.celery_worker import celery_worker_factory  # noqa: F401 - fixture re-export


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Recordings go to a per-test directory, whose files a test can look for."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path}},
    }


def client_for(plaintext: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


@pytest.fixture
def privacy_api(org, admin):
    return client_for(make_key(org, scope="read_write_privacy", admin=admin)[1])


@pytest.fixture
def runtime(org):
    return Runtime(org)


@pytest.fixture
def other_runtime(other_org):
    return Runtime(other_org)


@pytest.fixture
def party_size(org):
    return call_field_create(org=org, name="party_size", label="Party size", type="number")


def place_call(runtime, *, started_at=T0, from_number="+14155550123", location=None, recording=True, **overrides):
    """A finished call with everything a call can hold (order, message, unanswered question, quality checks, a
    number call field with its quote, a recording); returns the Call row."""
    call_id, response = runtime.start(started_at=started_at, from_number=from_number,
                                      location_id=location.pk if location else None)
    assert response.status_code == 201, response.content
    body = {
        "ended_at": iso(started_at + timedelta(seconds=95)),
        "messages": [{"message": "Jordan wants to know if the patio is open", "caller_name": "Jordan Miles"}],
        "unanswered_questions": ["Is the patio heated?"],
        "fields": ({"party_size": {"value": 4, "evidence": "we are four people"}}
                   if CallField.objects.filter(organization=runtime.org, name="party_size").exists() else {}),
        "transcript": [*TRANSCRIPT, {"speaker": "caller", "text": "And we are four people.", "offset_seconds": 20}],
        **overrides,
    }
    response = runtime.complete(call_id, **body)
    assert response.status_code in (200, 201), response.content
    if recording:
        assert runtime.upload(call_id).status_code == 201
    return runtime.call(call_id)


@pytest.fixture
def locations(org):
    return [location_create(org=org, name=name, address="1 Main St", timezone="UTC", phone_number=phone)
            for name, phone in (("North", "+12125550101"), ("South", "+12125550102"))]
