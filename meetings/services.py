"""Writes of the meetings product, one transaction each. The runtime API, the dashboard, the status hook and
`simulate_meeting` all come through here.

Lifecycle of an outcome: drafted (ingested) -> edited any number of times -> approved -> dispatched (one or more
times). Rules chosen here (docs/api.md#meetings has the dispatch's; meetings/README.md all of them):
- `outcome_update` is for admins, and only before the first dispatch (after it: 409 `invalid_transition`; what
  subscribers received must stay what the dashboard shows). An edit of an approved outcome withdraws the
  approval, so nothing unapproved is ever dispatched.
- `outcome_approve` is idempotent: approving an approved outcome keeps the first approver and time.
- `outcome_dispatch` needs an approved outcome and an org with the meetings product on. It may be repeated (a
  fresh dispatch with a fresh token each time, e.g. after a receiver failed). It is the only thing that emits
  `meeting.outcome_approved`: approval alone emits nothing.
- Progress moves sent -> acked -> done | failed. `acked` is the only way forward from `sent` (docs/api.md#meetings:
  acked -> done | failed and nothing from sent but acked), so a receiver that fails before acknowledging posts
  `acked` then `failed`. Repeating the current state is accepted and changes nothing.
"""

from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import InvalidTransition, NotFound, ValidationFailed
from core.links import meeting_url
from core.sensitive import Redactor
from core.timefmt import iso_ms
from orgs.models import Organization
from orgs.redaction import policy_of
from orgs.services import require_admin
from webhooks.services import emit

from .errors import MeetingsProductOff
from .models import Dispatch, DispatchProgress, Meeting, Outcome
from .selectors import dispatch_for_token
from .tokens import digest_token, generate_token
from .validation import NAME, TEXT, clean_outcome

EVENT_TYPE = "meeting.outcome_approved"
MAX_DETAIL = TEXT
ALLOWED_TRANSITIONS = {
    Dispatch.State.SENT: {Dispatch.State.ACKED},
    Dispatch.State.ACKED: {Dispatch.State.DONE, Dispatch.State.FAILED},
    Dispatch.State.DONE: set(),
    Dispatch.State.FAILED: set(),
}
REPORTABLE_STATES = (Dispatch.State.ACKED, Dispatch.State.DONE, Dispatch.State.FAILED)


def status_url(dispatch_id, token: str) -> str:
    return f"{settings.BASE_URL}/hooks/meeting-dispatches/{dispatch_id}/status?token={token}"


def _clean_meeting_fields(*, runtime_meeting_id, title, started_at, ended_at) -> dict:
    errors: dict[str, list[str]] = {}
    if not isinstance(runtime_meeting_id, str) or not runtime_meeting_id.strip():
        errors["runtime_meeting_id"] = ["This field is required."]
    elif len(runtime_meeting_id.strip()) > NAME:
        errors["runtime_meeting_id"] = [f"Ensure this field has no more than {NAME} characters."]
    if title is not None:
        if not isinstance(title, str):
            errors["title"] = ["Expected a string or null."]
        elif len(title.strip()) > NAME:
            errors["title"] = [f"Ensure this field has no more than {NAME} characters."]
    for name, value in (("started_at", started_at), ("ended_at", ended_at)):
        if value is None and name == "ended_at":
            continue
        if not isinstance(value, datetime) or timezone.is_naive(value):
            errors[name] = ["Expected an ISO 8601 timestamp with a time zone."]
    if not errors and ended_at is not None and ended_at < started_at:
        errors["ended_at"] = ["Must not be before started_at."]
    if errors:
        raise ValidationFailed(field_errors=errors)
    return {
        "runtime_meeting_id": runtime_meeting_id.strip(),
        "title": (title.strip() or None) if isinstance(title, str) else None,
        "started_at": started_at,
        "ended_at": ended_at,
    }


# The free texts of an outcome (meetings.validation's shape), redacted before they are stored.
_TEXTS = {"tickets": ("title", "description", "provenance"), "decisions": ("decision", "context"),
          "open_questions": ("question", "context"), "action_items": ("who", "what")}
_TEXT_LISTS = {"tickets": ("acceptance_criteria", "assumptions")}


def _redacted_outcome(org: Organization, cleaned: dict) -> dict:
    """The outcome with sensitive data replaced by `[kind]` under the organization's redaction policy
    (docs/privacy.md#redaction): what a meeting heard is kept and dispatched only redacted."""
    redact = Redactor(policy_of(org), detect=frozenset()).text
    out = dict(cleaned)
    if isinstance(out.get("summary"), str):
        out["summary"] = redact(out["summary"])
    for name, keys in _TEXTS.items():
        if name not in out:
            continue
        items = []
        for item in out[name]:
            item = dict(item)
            for key in keys:
                item[key] = redact(item.get(key))
            for key in _TEXT_LISTS.get(name, ()):
                item[key] = [redact(text) for text in item.get(key) or []]
            items.append(item)
        out[name] = items
    return out


@transaction.atomic
def meeting_ingest(
    *, org: Organization, runtime_meeting_id: str, title: str | None, started_at: datetime,
    ended_at: datetime | None = None, outcome: dict,
) -> tuple[Meeting, Outcome, bool]:
    """Stores a meeting and its drafted outcome from the meetings runtime. Returns (meeting, outcome, created).

    Idempotent on (org, runtime_meeting_id): a repeat returns the stored meeting unchanged (the first post wins;
    the runtime retries after timeouts and must not create a second meeting or overwrite an admin's edits).
    The outcome is validated strictly (meetings.validation) before anything is written. Accepted whether or not
    the org has the meetings product on; the dashboard and dispatch only serve orgs that have it.
    """
    fields = _clean_meeting_fields(
        runtime_meeting_id=runtime_meeting_id, title=title, started_at=started_at, ended_at=ended_at
    )
    existing = Meeting.objects.for_org(org).filter(runtime_meeting_id=fields["runtime_meeting_id"]).first()
    if existing is not None:
        return existing, existing.outcome, False
    if not isinstance(outcome, dict):
        raise ValidationFailed(field_errors={"outcome": ["Expected an object."]})
    try:
        cleaned = clean_outcome(outcome)
    except ValidationFailed as exc:
        # Here the outcome is the body's `outcome` object: name its fields from the body's top.
        details = exc.details or {}
        raise ValidationFailed(
            field_errors={f"outcome.{k}" if k else "outcome": v for k, v in details.get("fieldErrors", {}).items()},
            form_errors=[f"outcome: {message}" for message in details.get("formErrors", [])],
        ) from None
    cleaned = _redacted_outcome(org, cleaned)
    fields["title"] = Redactor(policy_of(org), detect=frozenset()).text(fields["title"])
    try:
        with transaction.atomic():
            meeting = Meeting.objects.create(organization=org, **fields)
    except IntegrityError:
        # A concurrent post with the same runtime id won the unique constraint; answer with its meeting.
        meeting = Meeting.objects.for_org(org).get(runtime_meeting_id=fields["runtime_meeting_id"])
        return meeting, meeting.outcome, False
    created = Outcome.objects.create(organization=org, meeting=meeting, **cleaned)
    return meeting, created, True


def _lock(outcome: Outcome) -> Outcome:
    return Outcome.objects.select_for_update().select_related("meeting", "organization").get(pk=outcome.pk)


@transaction.atomic
def outcome_update(*, outcome: Outcome, by, title: str | None = None, **changes) -> Outcome:
    """An admin's edit of any of summary, tickets, decisions, open_questions, action_items (and the meeting's
    `title` when given). The whole result is validated as one outcome. Withdraws an approval; refused with
    InvalidTransition once the outcome has been dispatched."""
    require_admin(user=by, org=outcome.organization)
    locked = _lock(outcome)
    if locked.dispatches.exists():
        raise InvalidTransition("A dispatched outcome can no longer be edited.")
    unknown = sorted(set(changes) - {"summary", "tickets", "decisions", "open_questions", "action_items"})
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s) in object: {', '.join(map(repr, unknown))}"])
    merged = {
        "summary": locked.summary, "tickets": locked.tickets, "decisions": locked.decisions,
        "open_questions": locked.open_questions, "action_items": locked.action_items,
        "schema_version": locked.schema_version, **changes,
    }
    cleaned = _redacted_outcome(locked.organization, clean_outcome(merged))
    for field, value in cleaned.items():
        setattr(locked, field, value)
    locked.approved_by = None
    locked.approved_at = None
    locked.edited_by = by
    locked.edited_at = timezone.now()
    locked.save(update_fields=[*cleaned, "approved_by", "approved_at", "edited_by", "edited_at", "updated_at"])
    if title is not None:
        meeting = locked.meeting
        meeting.title = _clean_meeting_fields(
            runtime_meeting_id=meeting.runtime_meeting_id, title=title, started_at=meeting.started_at,
            ended_at=meeting.ended_at,
        )["title"]
        meeting.save(update_fields=["title", "updated_at"])
    return locked


@transaction.atomic
def outcome_approve(*, outcome: Outcome, by) -> Outcome:
    """An admin approves the outcome as it stands. Emits nothing (the event fires on dispatch). Idempotent."""
    require_admin(user=by, org=outcome.organization)
    locked = _lock(outcome)
    if locked.approved_at is None:
        locked.approved_by = by
        locked.approved_at = timezone.now()
        locked.save(update_fields=["approved_by", "approved_at", "updated_at"])
    return locked


def outcome_approved_data(outcome: Outcome, dispatch: Dispatch, token: str) -> dict:
    """The `meeting.outcome_approved` data: every field of its schema (docs/webhooks.md#event-types), nothing else."""
    meeting = outcome.meeting
    return {
        "meeting_id": str(meeting.pk),
        "outcome_id": str(outcome.pk),
        "dispatch_id": str(dispatch.pk),
        "title": meeting.title,
        "approved_at": iso_ms(outcome.approved_at),
        "summary": outcome.summary,
        "tickets": outcome.tickets,
        "decisions": outcome.decisions,
        "open_questions": outcome.open_questions,
        "action_items": outcome.action_items,
        "schema_version": outcome.schema_version,
        "meeting_url": meeting_url(meeting.pk),
        "status_url": status_url(dispatch.pk, token),
    }


@transaction.atomic
def outcome_dispatch(*, outcome: Outcome, by) -> Dispatch:
    """An admin sends the approved outcome: creates a Dispatch (state `sent`, a fresh token kept only as its
    digest) and emits `meeting.outcome_approved` in this transaction. Refused unless approved (409
    `invalid_transition`) and unless the org has the meetings product on (403; no dispatch, no event)."""
    require_admin(user=by, org=outcome.organization)
    locked = _lock(outcome)
    org = Organization.objects.get(pk=locked.organization_id)  # fresh: the product may just have been turned off
    if not org.meetings_enabled:
        raise MeetingsProductOff("The meetings product is off for this organization.")
    if locked.approved_at is None:
        raise InvalidTransition("Approve the outcome before dispatching it.")
    token = generate_token()
    dispatch = Dispatch.objects.create(
        organization=org, outcome=locked, token_digest=digest_token(token), created_by=by
    )
    event = emit(org=org, type=EVENT_TYPE, data=outcome_approved_data(locked, dispatch, token), location_id=None)
    dispatch.event_id = event.id
    dispatch.save(update_fields=["event_id", "updated_at"])
    return dispatch


@transaction.atomic
def dispatch_report_progress(*, dispatch_id, token: str | None, state: str, detail: str | None = None) -> Dispatch:
    """A receiver's progress post. The token authenticates (NotFound when wrong, nothing changed); the move is
    checked against ALLOWED_TRANSITIONS under the dispatch's row lock, so two posts cannot both move it.
    Repeating the current state returns it unchanged; another move raises InvalidTransition."""
    dispatch = dispatch_for_token(dispatch_id=dispatch_id, token=token, lock=True)
    if dispatch is None:
        raise NotFound()
    errors: dict[str, list[str]] = {}
    if state not in REPORTABLE_STATES:
        errors["state"] = [f"Must be one of {', '.join(REPORTABLE_STATES)}."]
    if detail is not None and not isinstance(detail, str):
        errors["detail"] = ["Expected a string."]
    elif detail is not None and len(detail) > MAX_DETAIL:
        errors["detail"] = [f"Ensure this field has no more than {MAX_DETAIL} characters."]
    if errors:
        raise ValidationFailed(field_errors=errors)
    if state == dispatch.state:
        return dispatch
    if state not in ALLOWED_TRANSITIONS[dispatch.state]:
        raise InvalidTransition(f"A dispatch cannot go from {dispatch.state} to {state}.")
    DispatchProgress.objects.create(
        organization_id=dispatch.organization_id, dispatch=dispatch, from_state=dispatch.state, state=state,
        detail=detail or "",
    )
    dispatch.state = state
    dispatch.save(update_fields=["state", "updated_at"])
    return dispatch
