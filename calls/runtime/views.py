"""The agent runtime's internal API (/internal/agent/v1/orgs/{org_id}/...). Thin: authenticate, validate, call.

The runtime authenticates with the service token (never an org key); the organization comes from the path.
Every write is idempotent under retries: the runtime's call id and event ids are the keys.
"""

from datetime import timedelta

from rest_framework import serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from api.runtime.views import RuntimeAPIView
from api.serializers import RangeDateTimeField
from calls import availability, payloads, selectors
from calls.models import Call, Recording
from calls.services.bookings import busy_spans
from calls.services.lifecycle import call_complete, call_start
from calls.services.orders import OrderInput
from calls.services.recordings import recording_store
from calls.services.tool_events import tool_event_record
from core import numbers
from core.errors import ValidationFailed
from core.timefmt import iso_ms
from knowledge import selectors as knowledge_selectors
from knowledge.models import Calendar
from orgs.tenancy import get_for_org

from .serializers import CallCompleteSerializer, CallStartSerializer, ToolEventSerializer

# Path and header values land in these columns: longer ones are a 400 here, never a DataError (500) below.
CALL_ID_MAX = Call._meta.get_field("runtime_call_id").max_length
CONTENT_TYPE_MAX = Recording._meta.get_field("content_type").max_length
DURATION_MAX = 2_147_483_647  # Recording.duration_seconds is a PositiveIntegerField


def _path_call_id(call_id: str) -> str:
    """The runtime's call id from the path, checked as the body's `call_id` is at call start."""
    if len(call_id) > CALL_ID_MAX:
        message = f"Ensure this field has no more than {CALL_ID_MAX} characters."
        raise ValidationFailed(field_errors={"call_id": [message]})
    return call_id


def _call_summary(call) -> dict:
    return {
        "id": str(call.pk),
        "call_id": call.runtime_call_id,
        "status": call.status,
        "location_id": str(call.location_id) if call.location_id else None,
        "contact_id": str(call.contact_id) if call.contact_id else None,
        "started_at": iso_ms(call.started_at),
        # False for a caller on the suppression list (docs/privacy.md): no recording need be uploaded.
        "store_content": call.content_deleted_at is None,
    }


class KnowledgeView(RuntimeAPIView):
    """GET: facts, locations, team members, escalation rules, calendars and org settings, read fresh each time.
    `If-None-Match` with the current ETag answers 304 without loading the rows."""

    def get(self, request, org_id):
        etag = knowledge_selectors.runtime_knowledge_etag(org=self.org)
        if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
            return Response(status=304, headers={"ETag": etag, "Cache-Control": "no-cache"})
        etag, data = knowledge_selectors.runtime_knowledge(org=self.org)
        return Response({"data": data}, headers={"ETag": etag, "Cache-Control": "no-cache"})


class CallStartView(RuntimeAPIView):
    """POST {call_id, started_at, from_number?, location_id?, direction?}: 201 new, 200 for a retry."""

    def post(self, request, org_id):
        data = self.validate_body(CallStartSerializer)
        call, created = call_start(
            org=self.org,
            runtime_call_id=data["call_id"],
            started_at=data["started_at"],
            from_number=data["from_number"],
            location_id=data["location_id"],
            direction=data["direction"],
        )
        return Response({"data": _call_summary(call)}, status=201 if created else 200)


class ToolEventView(RuntimeAPIView):
    """POST {event_id, type, label?, offset_seconds?, data}: 201 recorded, 200 for a retried event id."""

    def post(self, request, org_id, call_id):
        call_id = _path_call_id(call_id)
        data = self.validate_body(ToolEventSerializer)
        result, recorded = tool_event_record(
            org=self.org,
            runtime_call_id=call_id,
            runtime_event_id=data["event_id"],
            type=data["type"],
            label=data["label"],
            offset_seconds=data["offset_seconds"],
            data=data["data"],
        )
        call = selectors.runtime_call(org=self.org, runtime_call_id=call_id)
        body = {"event_id": data["event_id"], "type": data["type"], "result": result, "trail": call.trail}
        return Response({"data": body}, status=201 if recorded else 200)


class CallCompleteView(RuntimeAPIView):
    """POST the finished call; 200 with the call as GET /v1/calls/{id} shows it (also for a retry)."""

    def post(self, request, org_id, call_id):
        call_id = _path_call_id(call_id)
        data = self.validate_body(CallCompleteSerializer)
        start = None
        if "started_at" in data:
            start = {"started_at": data["started_at"], "from_number": data.get("from_number"),
                     "location_id": data.get("location_id"), "direction": data.get("direction", "inbound")}
        order = data["order"]
        call, _ = call_complete(
            org=self.org,
            runtime_call_id=call_id,
            start=start,
            ended_at=data["ended_at"],
            duration_seconds=data["duration_seconds"],
            classification=data["classification"],
            disposition=data["disposition"],
            summary=data["summary"],
            outcome=data["outcome"],
            outcome_tags=data["outcome_tags"],
            transcript=[dict(turn) for turn in data["transcript"]],
            quality_checks=[dict(check) for check in data["quality_checks"]],
            score=data["score"],
            caller_name=data["caller"].get("name"),
            caller_email=data["caller"].get("email"),
            order=OrderInput(**order) if order is not None else None,
            messages=[dict(message) for message in data["messages"]],
            knowledge_version=data["knowledge_version"],
            facts_used=data["facts_used"],
            unanswered_questions=data["unanswered_questions"],
            fields=data["fields"],
        )
        call = selectors.call_get(org=self.org, call_id=call.pk)
        return Response({"data": payloads.call_detail_data(call)})


class RecordingUploadView(RuntimeAPIView):
    """PUT or POST the audio: multipart (`file`, optional `duration_seconds`) or a raw audio body
    (`Content-Type: audio/...`, `?duration_seconds=`). 201 stored, 200 when the call already has one."""

    parser_classes = [MultiPartParser]

    def post(self, request, org_id, call_id):
        call_id = _path_call_id(call_id)
        if request.content_type.startswith("multipart/form-data"):
            upload = request.FILES.get("file")
            if upload is None:
                raise ValidationFailed(field_errors={"file": ["No file was submitted."]})
            content, content_type = upload.read(), upload.content_type or ""
            raw_duration = request.data.get("duration_seconds") or request.query_params.get("duration_seconds")
        else:
            content, content_type = request._request.body, request.content_type or ""
            raw_duration = request.query_params.get("duration_seconds")
        content_type = content_type.split(";")[0].strip().lower()
        if not content_type.startswith("audio/"):
            raise ValidationFailed(field_errors={"content_type": ["The recording must be audio/*."]})
        if len(content_type) > CONTENT_TYPE_MAX:
            message = f"Ensure the content type has no more than {CONTENT_TYPE_MAX} characters."
            raise ValidationFailed(field_errors={"content_type": [message]})
        if not content:
            raise ValidationFailed(field_errors={"file": ["The recording is empty."]})
        try:
            duration = numbers.parse_integer(str(raw_duration)) if raw_duration not in (None, "") else None
            if duration is not None and not 0 <= duration <= DURATION_MAX:
                raise ValueError
        except ValueError:
            raise ValidationFailed(field_errors={"duration_seconds": ["A whole number of seconds."]}) from None
        recording, created = recording_store(
            org=self.org, runtime_call_id=call_id, content=content, content_type=content_type,
            duration_seconds=duration,
        )
        body = {
            "id": str(recording.pk) if recording.pk else None,  # None: refused quietly (a deleted call's)
            "call_id": str(recording.call_id),
            "content_type": recording.content_type,
            "size_bytes": recording.size_bytes,
            "duration_seconds": recording.duration_seconds,
            "uploaded_at": iso_ms(recording.uploaded_at),
        }
        return Response({"data": body}, status=201 if created else 200)

    put = post


MAX_AVAILABILITY_RANGE = timedelta(days=31)


class AvailabilityParams(serializers.Serializer):
    # "from" is a Python keyword, so the field is declared below.
    to = RangeDateTimeField(help_text="End of the range (ISO 8601, exclusive).")

    def validate(self, data):
        if data["to"] <= data["from"]:
            raise serializers.ValidationError({"to": ["Must be after from."]})
        if data["to"] - data["from"] > MAX_AVAILABILITY_RANGE:
            raise serializers.ValidationError({"to": [
                f"The range may span at most {MAX_AVAILABILITY_RANGE.days} days."]})
        return data


AvailabilityParams._declared_fields["from"] = RangeDateTimeField(help_text="Start of the range (ISO 8601).")


class AvailabilityView(RuntimeAPIView):
    """GET ?from=&to=: the calendar's free slots in that range (weekly hours in its time zone, minus confirmed
    bookings), so the agent offers times the booking will not refuse."""

    def get(self, request, org_id, calendar_id):
        calendar = get_for_org(Calendar, self.org, calendar_id)
        unknown = sorted(set(request.query_params) - {"from", "to"})
        if unknown:
            raise ValidationFailed(field_errors={name: ["Unknown query parameter."] for name in unknown})
        params = AvailabilityParams(data=request.query_params)
        params.is_valid(raise_exception=True)
        start, end = params.validated_data["from"], params.validated_data["to"]
        free = availability.slots(calendar.weekly_hours, timezone=calendar.timezone,
                                  slot_minutes=calendar.slot_minutes, start=start, end=end,
                                  busy=busy_spans(calendar, start, end))
        return Response({"data": {
            "calendar_id": str(calendar.pk), "timezone": calendar.timezone, "slot_minutes": calendar.slot_minutes,
            "slots": [{"start_at": iso_ms(slot_start), "end_at": iso_ms(slot_end)} for slot_start, slot_end in free],
        }})
