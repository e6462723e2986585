"""`simulate_meeting --org ORG_ID [--dispatch]`: a meeting with an AI-drafted outcome, as the meetings runtime
would send it, posted through the real internal API (in process, through the real views, middleware and service
token). With --dispatch, the org's first admin approves and dispatches it (turning the meetings product on for
the org if it is off), through the same services as the dashboard. Prints one JSON line:
{"meeting_id": ..., "outcome_id": ..., "dispatch_id": ...|null}.
"""

import json
import random
import uuid
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.http.request import validate_host
from django.test import Client
from django.utils import timezone

from core.errors import DomainError
from core.timefmt import iso_ms
from meetings.models import Outcome
from meetings.services import outcome_approve, outcome_dispatch
from orgs.models import Membership, Organization
from orgs.services import organization_update

SCENARIOS = [
    {
        "title": "Checkout reliability sync",
        "summary": (
            "The team reviewed last week's checkout failures, which all trace back to payment webhooks arriving "
            "before the order row is committed. They agreed to make the payment handler order-independent and to "
            "add an alert on the retry queue depth. Rollout waits for the new idempotency keys to reach production."
        ),
        "tickets": [
            {
                "title": "Make the payment webhook handler order-independent",
                "description": "When a payment event arrives before its order exists, store it and apply it when "
                "the order is created instead of failing with 500.",
                "acceptance_criteria": [
                    "A payment event for an unknown order returns 2xx and is stored as pending.",
                    "Creating the order applies any pending payment events in the same transaction.",
                ],
                "file_refs": [
                    {"repo": "shop-backend", "path": "payments/webhooks.py"},
                    {"repo": "shop-backend", "path": "orders/services.py"},
                ],
                "confidence": 0.86,
                "assumptions": ["Payment events carry the order id in their metadata."],
                "provenance": "Discussed 04:10-09:35; Priya described the race, Sam proposed the pending table.",
            },
            {
                "title": "Alert when the payment retry queue grows",
                "description": "Page the on-call engineer when more than 100 payment events wait for retry for "
                "over 10 minutes.",
                "acceptance_criteria": ["An alert fires in staging when the threshold is crossed for 10 minutes."],
                "file_refs": [{"repo": "infra", "path": "alerts/payments.yaml"}],
                "confidence": 0.72,
                "assumptions": ["The queue depth metric is already exported.", "100 events is a sane threshold."],
                "provenance": "Raised by Lee at 12:40; thresholds were not finally agreed.",
            },
        ],
        "decisions": [
            {"decision": "Payment events for unknown orders are stored, not rejected.",
             "context": "Rejecting them made the provider retry for hours and hid real failures."},
        ],
        "open_questions": [
            {"question": "How long should a pending payment event be kept?",
             "context": "Sam suggested 7 days; nobody checked the provider's retry window."},
        ],
        "action_items": [
            {"who": "Sam", "what": "Write the pending-events migration and handler change.", "due": None},
            {"who": "Lee", "what": "Confirm the alert threshold with the on-call team.", "due": "2026-12-04"},
        ],
    },
    {
        "title": "Onboarding flow review",
        "summary": (
            "Product and support walked through the new onboarding flow with three recorded customer sessions. "
            "Most drop-offs happen at the phone number verification step. The team will simplify that step first."
        ),
        "tickets": [
            {
                "title": "Let users retry phone verification without restarting onboarding",
                "description": "A failed verification code currently sends users back to step one. Keep their "
                "progress and offer a resend after 30 seconds.",
                "acceptance_criteria": [
                    "A wrong code shows an inline error and keeps the entered data.",
                    "The resend button is enabled 30 seconds after the last code was sent.",
                ],
                "file_refs": [{"repo": "web-app", "path": "src/onboarding/VerifyPhone.tsx"}],
                "confidence": 0.9,
                "assumptions": [],
                "provenance": "Session recordings 2 and 3; agreed by Maria and Tom at 18:20.",
            },
        ],
        "decisions": [
            {"decision": "Phone verification stays mandatory.", "context": "Fraud rates doubled without it."},
        ],
        "open_questions": [],
        "action_items": [{"who": "Maria", "what": "Share the session recordings with design.", "due": None}],
    },
]


class Command(BaseCommand):
    help = "Creates a meeting with an AI-drafted outcome through the internal API; --dispatch approves and sends it."

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help="The organization's id.")
        parser.add_argument(
            "--dispatch", action="store_true",
            help="Approve and dispatch the outcome as the org's first admin (turns the meetings product on).",
        )

    def handle(self, *, org, dispatch, **options):
        try:
            organization = Organization.objects.get(pk=uuid.UUID(org))
        except (ValueError, Organization.DoesNotExist):
            raise CommandError(f"No organization {org}.") from None
        if not settings.AGENT_RUNTIME_TOKEN:
            raise CommandError("AGENT_RUNTIME_TOKEN is not set; the internal API refuses every request without it.")

        admin = self._first_admin(organization) if dispatch else None  # checked before anything is written
        response = self._post_meeting(organization)
        if response.status_code not in (200, 201):
            raise CommandError(f"The internal API refused the meeting ({response.status_code}): {response.content!r}")
        data = response.json()["data"]
        result = {"meeting_id": data["meeting_id"], "outcome_id": data["outcome_id"], "dispatch_id": None}

        if dispatch:
            result["dispatch_id"] = str(self._approve_and_dispatch(organization, admin, data["outcome_id"]).pk)
        self.stdout.write(json.dumps(result))

    def _post_meeting(self, org: Organization):
        scenario = random.choice(SCENARIOS)
        started_at = timezone.now() - timedelta(minutes=random.randint(35, 240))
        body = {
            "runtime_meeting_id": f"sim_{uuid.uuid4().hex}",
            "title": scenario["title"],
            "started_at": iso_ms(started_at),
            "ended_at": iso_ms(started_at + timedelta(minutes=random.randint(20, 55))),
            "outcome": {
                "summary": scenario["summary"],
                "tickets": scenario["tickets"],
                "decisions": scenario["decisions"],
                "open_questions": scenario["open_questions"],
                "action_items": scenario["action_items"],
                "schema_version": 1,
            },
        }
        # Address the request to BASE_URL's host when it is allowed, as the real runtime would.
        host = urlsplit(settings.BASE_URL).netloc
        if not validate_host(urlsplit(settings.BASE_URL).hostname or "", settings.ALLOWED_HOSTS):
            host = "testserver"
        client = Client(HTTP_HOST=host)
        return client.post(
            f"/internal/agent/v1/orgs/{org.pk}/meetings",
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {settings.AGENT_RUNTIME_TOKEN}",
        )

    def _first_admin(self, org: Organization) -> Membership:
        admin = (
            Membership.objects.for_org(org).filter(role=Membership.Role.ADMIN)
            .select_related("user").order_by("created_at", "id").first()
        )
        if admin is None:
            raise CommandError(f"Organization {org.pk} has no admin to approve and dispatch as.")
        return admin

    def _approve_and_dispatch(self, org: Organization, admin: Membership, outcome_id):
        try:
            if not org.meetings_enabled:
                org = organization_update(org=org, by=admin.user, meetings_enabled=True)
            outcome = Outcome.objects.for_org(org).get(pk=outcome_id)
            outcome = outcome_approve(outcome=outcome, by=admin.user)
            return outcome_dispatch(outcome=outcome, by=admin.user)
        except DomainError as exc:
            raise CommandError(f"{exc.message} {exc.details or ''}".strip()) from None
