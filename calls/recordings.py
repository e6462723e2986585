"""Playback URLs for recordings, minted per request and valid for one hour.

With S3 as the default storage (django-storages) the URL is S3's own presigned URL. With the file-system
storage it is an app URL carrying a `TimestampSigner` token of the recording id, served by `download` below:
the token is the capability (no key: a browser's audio element cannot send one), so it is signed, salted and
expires, and a forged or expired one is refused.

The token travels in the query string (`/recordings/?token=...`), which no log line of ours writes: gunicorn's
access log format (Procfile) has the path alone (`%(U)s`), and Django's request logging and the request-id lines
log `request.path`. In the path, every access log would hold an hour's playback. The older path form
(`/recordings/<token>`) is still served, for links minted before the change.
"""

import time
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.http import FileResponse, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from core.errors import error_body

from .models import Recording

URL_LIFETIME_SECONDS = 3600
TOKEN_SALT = "calls.recording.playback"


class _IssuedAtSigner(signing.TimestampSigner):
    """A TimestampSigner whose timestamp is the one we report as `expires_at - 3600`, not a second later."""

    def __init__(self, *, issued_at: int, **kwargs):
        super().__init__(**kwargs)
        self._issued_at = issued_at

    def timestamp(self):
        return signing.b62_encode(self._issued_at)


def sign_recording_token(recording_id, *, issued_at: int | None = None) -> str:
    issued_at = int(time.time()) if issued_at is None else issued_at
    return _IssuedAtSigner(issued_at=issued_at, salt=TOKEN_SALT).sign(str(recording_id))


def _is_s3(storage) -> bool:
    # Checked by module name so that boto3 is imported only where S3 is configured. `__class__`, not type(): the
    # default storage is a lazy proxy, whose type() is the proxy's and whose __class__ is the storage's.
    return storage.__class__.__module__.startswith("storages.backends.s3")


def playback(recording: Recording, *, base_url: str | None = None) -> dict:
    """`{url, expires_at, content_type, duration_seconds}` with a URL minted now. `base_url` defaults to BASE_URL;
    the dashboard passes "" so its player stays on the page's own origin, the only one its CSP (`media-src 'self'`)
    allows, whatever BASE_URL says."""
    issued_at = int(time.time())
    expires_at = datetime.fromtimestamp(issued_at, tz=UTC) + timedelta(seconds=URL_LIFETIME_SECONDS)
    storage = recording.file.storage
    if _is_s3(storage):
        url = storage.url(
            recording.file.name,
            parameters={"ResponseContentType": recording.content_type},
            expire=URL_LIFETIME_SECONDS,
        )
    else:
        token = sign_recording_token(recording.pk, issued_at=issued_at)
        base = settings.BASE_URL if base_url is None else base_url
        url = f"{base}{reverse('recording-download')}?{urlencode({'token': token})}"
    return {
        "url": url,
        "expires_at": expires_at,
        "content_type": recording.content_type,
        "duration_seconds": recording.duration_seconds,
    }


@require_GET
def download(request):
    """Streams a recording for a valid, unexpired token (`?token=`). Forged, expired or missing: 403; recording
    gone: 404."""
    token = request.GET.get("token", "")
    try:
        recording_id = signing.TimestampSigner(salt=TOKEN_SALT).unsign(token, max_age=URL_LIFETIME_SECONDS)
    except signing.SignatureExpired:
        return JsonResponse(error_body("forbidden", {"reason": "expired"}), status=403)
    except signing.BadSignature:
        return JsonResponse(error_body("forbidden"), status=403)
    recording = Recording.objects.filter(pk=recording_id).first()
    if recording is None or not recording.file.storage.exists(recording.file.name):
        return JsonResponse(error_body("not_found"), status=404)
    response = FileResponse(recording.file.open("rb"), content_type=recording.content_type)
    response["Content-Length"] = str(recording.size_bytes or recording.file.size)
    # The URL is a short-lived capability: no shared caches, and never sent on as a Referer.
    response["Cache-Control"] = "private, max-age=3600"
    response["Referrer-Policy"] = "no-referrer"
    return response
