"""Storing a call's recording: once per call, before or after its completion, the file never outliving a rolled-back
upload. (Playback URLs for stored recordings are minted in calls/recordings.py.)"""

import logging
import uuid

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from orgs.models import Organization
from webhooks.services import emit

from .. import payloads
from ..errors import RecordingDisabled
from ..models import Recording
from .lookups import locked_call

logger = logging.getLogger("calls")

CONTENT_TYPE_EXTENSIONS = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp4": "m4a",
    "audio/ogg": "ogg", "audio/webm": "webm", "audio/flac": "flac",
}


def recording_store(
    *,
    org: Organization,
    runtime_call_id: str,
    content: bytes,
    content_type: str,
    duration_seconds: int | None = None,
) -> tuple[Recording, bool]:
    """Stores the call's recording once: (recording, created). Emits `call.recording_ready`.

    Works before or after the call's completion (docs/webhooks.md#event-types: the recording often comes first). A
    second upload for the same call keeps the first and emits nothing. Refused when the org has call recording turned
    off. A call whose content was deleted gets an unsaved row back (created, as if stored): nothing is written.

    The file is written before the row and deleted again when this transaction fails (inserting, emitting or
    committing). Assumes this is the outermost transaction, as for the runtime's upload view: if an enclosing
    one rolled back after this returned, the file would stay behind.
    """
    if not org.call_recording_enabled:
        raise RecordingDisabled("Call recording is turned off for this organization.")
    stored_name = None
    try:
        with transaction.atomic():
            call = locked_call(org=org, runtime_call_id=runtime_call_id)
            if (call.redaction or {}).get("recording_withheld"):
                return _refused_quietly(call, content, content_type, duration_seconds), True
            existing = Recording.objects.filter(call=call).first()
            if existing is not None:
                return existing, False
            if call.content_deleted_at is not None:
                # The call's content was deleted (or its caller is suppressed): the audio is refused quietly, so the
                # runtime gets its usual answer and nothing is stored or announced.
                return Recording(id=None, organization=org, call=call, content_type=content_type,
                                 size_bytes=len(content), duration_seconds=duration_seconds,
                                 uploaded_at=timezone.now()), True
            recording = Recording(
                organization=org,
                call=call,
                content_type=content_type,
                size_bytes=len(content),
                duration_seconds=duration_seconds,
                uploaded_at=timezone.now(),
            )
            # Storage is not transactional: the file is written under the call's lock (so only one upload writes)
            # and deleted below if the transaction does not commit, so a rollback never leaves an orphan file.
            extension = CONTENT_TYPE_EXTENSIONS.get(content_type, "bin")
            recording.file.save(f"{call.pk}.{extension}", ContentFile(content), save=False)
            stored_name = recording.file.name
            recording.save(force_insert=True)
            emit(org=org, type="call.recording_ready", data=payloads.recording_ready_data(call, duration_seconds),
                 location_id=call.location_id)
    except BaseException:
        if stored_name is not None:
            _delete_stored_file(recording.file.storage, stored_name)
        raise
    return recording, True


def _refused_quietly(call, content: bytes, content_type: str, duration_seconds: int | None) -> Recording:
    """The answer to an upload for a call whose recording is withheld (calls.redaction): the runtime's usual answer,
    so it neither retries nor learns anything, with nothing written and no `call.recording_ready`. The id is the
    same on every retry."""
    return Recording(id=uuid.uuid5(uuid.NAMESPACE_URL, f"withheld-recording:{call.pk}"),
                     organization_id=call.organization_id, call=call, content_type=content_type,
                     size_bytes=len(content), duration_seconds=duration_seconds, uploaded_at=timezone.now())


def recording_withhold(*, call) -> bool:
    """Deletes the call's recording, row and file, because sensitive data was heard on it (the caller holds the
    call's lock in a transaction). The file goes once the transaction commits, so a rolled-back completion keeps
    it. Returns whether there was one."""
    recording = Recording.objects.filter(call=call).first()
    if recording is None:
        return False
    storage, name = recording.file.storage, recording.file.name
    recording.delete()
    transaction.on_commit(lambda: _delete_stored_file(storage, name))
    return True


def _delete_stored_file(storage, name: str) -> None:
    try:
        storage.delete(name)
    except Exception:
        # The original failure is what the caller must see; a leftover file is only logged.
        logger.exception("Could not delete the recording file %s after a rollback", name)
