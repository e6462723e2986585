"""`manage.py purge_expired_content [--org ID]`: the daily retention purge, at once (operators, drills)."""

import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from orgs.models import Organization
from privacy.services import retention_purge


class Command(BaseCommand):
    help = "Deletes expired call content now, as the daily purge does; prints one JSON line per organization."

    def add_arguments(self, parser):
        parser.add_argument("--org", help="Only this organization's id.")

    def handle(self, *args, **options):
        orgs = Organization.objects.order_by("pk")
        if options["org"]:
            orgs = orgs.filter(pk=options["org"]) if _is_uuid(options["org"]) else orgs.none()
            if not orgs.exists():
                raise CommandError(f"No organization {options['org']}.")
        for org in orgs:
            result = retention_purge(org=org)
            self.stdout.write(json.dumps({"organization_id": str(org.pk), **result}))


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
