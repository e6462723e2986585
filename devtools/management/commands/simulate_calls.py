"""`simulate_calls --org ORG_ID [--count N] [--scenario NAME] [--location ID]`: realistic calls through the agent
runtime API.

Prints one JSON line per call: `{"call_id": ..., "scenario": ...}`. The requests go through the real runtime
views (in process by default; `--base-url` sends them to a running server instead).
"""

import json
import uuid

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from devtools.simulation import SCENARIOS, RuntimeClient, RuntimeRequestFailed, Simulator, ensure_demo_configuration
from orgs.models import Organization


class Command(BaseCommand):
    help = "Drives simulated calls through the agent runtime API and prints one JSON line per call."

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help="The organization's id.")
        parser.add_argument("--count", type=int, default=10, help="How many scenarios to play (default 10).")
        parser.add_argument("--scenario", default="mixed", choices=[*SCENARIOS, "mixed"])
        parser.add_argument("--seed", type=int, default=None, help="Random seed, for a reproducible run.")
        parser.add_argument("--location", default=None, help="Place every call at this location of the org.")
        parser.add_argument("--base-url", default=None,
                            help="Send the requests to this running server instead of in process.")

    def handle(self, *, org, count, scenario, seed, base_url, location, **options):
        organization = Organization.objects.filter(pk=org).first() if _is_uuid(org) else None
        if organization is None:
            raise CommandError(f"No organization with id {org}.")
        if not settings.AGENT_RUNTIME_TOKEN:
            raise CommandError("AGENT_RUNTIME_TOKEN is not set; the runtime API refuses every request without it.")
        if count < 1:
            raise CommandError("--count must be at least 1.")
        ensure_demo_configuration(organization)
        client = RuntimeClient(org_id=str(organization.pk), base_url=base_url)
        try:
            try:
                simulator = Simulator(client, seed=seed, location_id=location)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            for _ in range(count):
                for line in simulator.play(scenario):
                    self.stdout.write(json.dumps(line))
        except RuntimeRequestFailed as exc:
            raise CommandError(str(exc)) from exc


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True
