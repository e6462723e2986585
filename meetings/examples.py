"""A realistic `meeting.outcome_approved` for test deliveries, built by the event's own builder from rows that are
never saved (registered with webhooks.catalog in MeetingsConfig.ready). Its status URL carries no real token."""

import uuid
from datetime import timedelta

from django.utils import timezone

from .models import Dispatch, Meeting, Outcome
from .services import outcome_approved_data


def outcome_approved(org) -> dict:
    now = timezone.now()
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)
    meeting = Meeting(id=uuid.uuid4(), organization=org, runtime_meeting_id="example", title="Checkout sync",
                      started_at=now - timedelta(minutes=45), ended_at=now - timedelta(minutes=15))
    outcome = Outcome(
        id=uuid.uuid4(), organization=org, meeting=meeting, approved_at=now, schema_version=1,
        summary="Agreed to retry failed card payments once before showing an error.",
        tickets=[{
            "title": "Retry declined card payments once", "description": "One retry after a soft decline.",
            "acceptance_criteria": ["A soft decline is retried once"],
            "file_refs": [{"repo": "shop", "path": "pay.py"}],
            "confidence": 0.8, "assumptions": [], "provenance": "Discussed at 12:40",
        }],
        decisions=[{"decision": "Retry once", "context": "Most soft declines pass on the second try."}],
        open_questions=[{"question": "Which processors support idempotent retries?", "context": "Payments"}],
        action_items=[{"who": "Dana", "what": "Check processor docs", "due": None}],
    )
    dispatch = Dispatch(id=uuid.uuid4(), organization=org, outcome=outcome)
    return outcome_approved_data(outcome, dispatch, "example")
