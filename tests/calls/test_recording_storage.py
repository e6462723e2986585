"""Recordings in object storage (RECORDINGS_STORAGE_URL): uploaded through one node, played back through another,
each node with a disk of its own. A real S3-compatible server on loopback (moto's server mode, scripts/s3server.py);
two live gunicorns with different MEDIA_ROOTs. Without the setting, the contrast: the other node finds nothing."""

import http.client
import json
import uuid
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from calls.models import Call
from scripts.s3server import S3Server
from tests.support.gunicorn import running_gunicorn

pytestmark = pytest.mark.django_db(transaction=True)

AUDIO = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(range(256)) * 8


def _request(port, method, path, *, token, body=None, content_type="application/json"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers={"Authorization": f"Bearer {token}",
                                                             "Content-Type": content_type})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _get(url: str) -> tuple[int, bytes, str]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request("GET", f"{parts.path}?{parts.query}")
        response = connection.getresponse()
        return response.status, response.read(), response.getheader("Content-Type")
    finally:
        connection.close()


def _upload_through(port, org) -> Call:
    """A call started and its recording uploaded through the runtime API of the node on `port`."""
    runtime_call_id = f"rt-{uuid.uuid4().hex}"
    prefix = f"/internal/agent/v1/orgs/{org.id}/calls"
    token = settings.AGENT_RUNTIME_TOKEN
    started = json.dumps({"call_id": runtime_call_id, "started_at": "2026-11-20T12:00:00.000Z",
                          "from_number": "+14155550123"})
    status, body = _request(port, "POST", prefix, token=token, body=started)
    assert status == 201, body
    status, body = _request(port, "PUT", f"{prefix}/{runtime_call_id}/recording?duration_seconds=42", token=token,
                            body=AUDIO, content_type="audio/wav")
    assert status in (200, 201), body
    return Call.objects.get(organization=org, runtime_call_id=runtime_call_id)


def _playback(port, plaintext, call) -> dict:
    status, body = _request(port, "GET", f"/v1/calls/{call.id}/recording", token=plaintext)
    assert status == 200, body
    return json.loads(body)["data"]


@pytest.fixture
def s3():
    with S3Server(bucket="va-recordings") as server:
        yield server


def test_a_recording_uploaded_through_one_node_plays_back_through_another(org, write_key, s3, tmp_path):
    _, plaintext = write_key
    media_a, media_b = tmp_path / "a-media", tmp_path / "b-media"
    env = s3.env()
    with running_gunicorn(tmp_path / "a.log", MEDIA_ROOT=str(media_a), **env) as node_a, \
            running_gunicorn(tmp_path / "b.log", MEDIA_ROOT=str(media_b), **env) as node_b:
        call = _upload_through(node_a, org)
        for node in (node_b, node_a):
            data = _playback(node, plaintext, call)
            assert set(data) == {"url", "expires_at", "content_type", "duration_seconds"}
            assert (data["content_type"], data["duration_seconds"]) == ("audio/wav", 42)
            assert data["url"].startswith(f"{s3.endpoint_url}/va-recordings/recordings/")
            assert "X-Amz-Expires=3600" in data["url"]
            assert _get(data["url"]) == (200, AUDIO, "audio/wav")
        # A URL without its signature is refused: the bucket is private.
        assert _get(data["url"].split("?")[0] + "?")[0] == 403
    assert s3.keys() == [call.recording.file.name]
    assert not any(path.is_file() for root in (media_a, media_b) if root.exists() for path in root.rglob("*"))


def test_on_the_local_disk_another_node_finds_nothing(org, write_key, tmp_path):
    """Why the setting exists: each node's MEDIA_ROOT is its own."""
    _, plaintext = write_key
    with running_gunicorn(tmp_path / "a.log", MEDIA_ROOT=str(tmp_path / "a")) as node_a, \
            running_gunicorn(tmp_path / "b.log", MEDIA_ROOT=str(tmp_path / "b")) as node_b:
        call = _upload_through(node_a, org)
        url = _playback(node_b, plaintext, call)["url"]
        path = urlsplit(url)
        assert _get(f"http://127.0.0.1:{node_b}{path.path}?{path.query}")[0] == 404
        assert _get(f"http://127.0.0.1:{node_a}{path.path}?{path.query}")[:2] == (200, AUDIO)
