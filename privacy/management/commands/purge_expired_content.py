"""`manage.py purge_expired_content [--org ID]`: the daily retention purge, at once (operators, drills)."""

import json

from django.core.management.base import BaseCommand, CommandError

from core.errors import NotFound
from orgs.models import Organization
from orgs.tenancy import get_or_not_found
from privacy.services import retention_purge


class Command(BaseCommand):
    help = "Deletes expired call content now, as the daily purge does; prints one JSON line per organization."

    def add_arguments(self, parser):
        parser.add_argument("--org", help="Only this organization's id.")

    def handle(self, *args, **options):
        orgs = Organization.objects.order_by("pk")
        if options["org"]:
            try:
                orgs = [get_or_not_found(Organization, options["org"])]
            except NotFound:
                raise CommandError(f"No organization {options['org']}.") from None
        for org in orgs:
            result = retention_purge(org=org)
            self.stdout.write(json.dumps({"organization_id": str(org.pk), **result}))

