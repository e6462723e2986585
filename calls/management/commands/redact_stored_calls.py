"""`manage.py redact_stored_calls [--org ID] [--since DATE]`: the current detector applied to calls already stored.

Run once after an upgrade that brings redaction or a new detector version (README, Upgrading). In batches, one call
per transaction (never a long lock), resumable (a call already at the current detector_version is skipped, so an
interrupted run simply starts again) and idempotent (a second run changes nothing).
"""

import sys
from datetime import UTC, datetime, time

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from calls.models import Call
from calls.services.redaction import call_redact_stored
from core.errors import NotFound
from core.sensitive import DETECTOR_VERSION
from orgs.models import Organization
from orgs.tenancy import get_or_not_found


def _since(value: str) -> datetime:
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.combine(day, time.min)
    if moment is None:
        raise CommandError(f"--since: not a date or a timestamp: {value!r}")
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)


class Command(BaseCommand):
    help = "Redact calls stored before the current detector version: their text, follow-ups and event bodies."

    def add_arguments(self, parser):
        parser.add_argument("--org", help="Only this organization's calls (its id).")
        parser.add_argument("--since", help="Only calls started on or after this date (YYYY-MM-DD or ISO 8601).")
        parser.add_argument("--batch-size", type=int, default=200)

    def handle(self, *args, org=None, since=None, batch_size=200, **options):
        calls = Call.objects.exclude(redaction__detector_version=DETECTOR_VERSION)
        if org:
            try:
                calls = calls.filter(organization=get_or_not_found(Organization, org))
            except NotFound:
                raise CommandError(f"--org: no organization {org!r}") from None
        if since:
            calls = calls.filter(started_at__gte=_since(since))
        total = calls.count()
        organizations: dict = {}
        done = redacted = 0
        last = None
        while True:
            page = calls.order_by("id")
            if last is not None:
                page = page.filter(id__gt=last)
            batch = list(page.values_list("id", "organization_id")[:batch_size])
            if not batch:
                break
            for call_id, org_id in batch:
                if org_id not in organizations:
                    organizations[org_id] = Organization.objects.get(pk=org_id)
                redacted += call_redact_stored(call_id=call_id, org=organizations[org_id])
                done += 1
            last = batch[-1][0]
            self._progress(done, total)
        self._progress(done, total, end=True)
        self.stdout.write(f"{redacted} call(s) redacted with detector version {DETECTOR_VERSION}; "
                          f"{done - redacted} already at it.")

    def _progress(self, done: int, total: int, *, end: bool = False) -> None:
        width = 30
        filled = width if not total else min(width, width * done // total)
        line = f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} calls"
        stream = self.stderr if not end else self.stdout
        stream.write(line, ending="\n" if end else "")
        if not end:
            sys.stderr.flush()

