"""`seed_demo`: a demo organization that looks like the real product, created once.

Runs on every `make run`; when the demo org exists it only prints the login again. Only with DEBUG on: its
password is public (here and in every `make run` output), so outside DEBUG it would be a known admin login.
"""

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from contacts.services import contact_create
from knowledge.services import fact_create, location_create, team_member_create
from orgs.models import Membership, Organization
from orgs.services import organization_create, user_get_or_create
from orgs.verification import mark_verified

DEMO_ORG = "Demo Pizzeria"
DEMO_EMAIL = "admin@demo.example"
DEMO_PASSWORD = "demo-password-2026"  # noqa: S105  (a public demo login, printed on purpose)

LOCATIONS = [
    ("Mission Street", "2101 Mission St, San Francisco, CA 94110", "America/Los_Angeles", "+14155550142"),
    ("Oakland Uptown", "1900 Telegraph Ave, Oakland, CA 94612", "America/Los_Angeles", "+15105550187"),
]
FACTS = [
    ("Opening hours", "Open every day 11:00-22:00; Fridays and Saturdays until 23:00.", None),
    ("Delivery area", "We deliver within 3 miles of each location; delivery costs $3.99, free over $40.", None),
    ("Gluten-free", "Gluten-free crust is available for 12-inch pizzas (+$3). Prepared in a shared kitchen.", None),
    ("Parking", "Free parking behind the Mission Street store after 6 pm.", 0),
    ("Catering", "Catering for 20+ people needs 48 hours notice; ask for Maria.", None),
    ("Vegan options", "Vegan cheese on any pizza for +$2; the Garden Vegan pizza is vegan by default.", None),
]
TEAM = [
    ("Maria Lopez", "maria@demo.example", "+14155550111", "Catering manager"),
    ("Sam Chen", "sam@demo.example", "+14155550112", "Store manager, Mission Street"),
    ("Priya Patel", "priya@demo.example", None, "Store manager, Oakland"),
]
CONTACTS = [
    ("+14155550123", "Jordan Miles", "jordan.miles@example.com", "Prefers thin crust."),
    ("+14155550176", "Avery Brooks", None, None),
    ("+15105550199", "Lena Park", "lena@example.org", "Office lunch orders on Fridays."),
]


class Command(BaseCommand):
    help = "Creates the demo organization (admin, locations, facts, team, contacts and simulated calls) once."

    def add_arguments(self, parser):
        parser.add_argument("--calls", type=int, default=40, help="How many simulated calls to drive.")

    def handle(self, *, calls, **options):
        if not settings.DEBUG:
            raise CommandError(
                "seed_demo runs only with DEBUG on: its accounts have a public password "
                "(create a real organization with `manage.py create_org`)."
            )
        org = Organization.objects.filter(name=DEMO_ORG, memberships__user__username=DEMO_EMAIL).first()
        if org is None:
            org = self._create()
            if calls:
                self.stdout.write(f"Simulating {calls} calls through the agent runtime API...")
                call_command("simulate_calls", "--org", str(org.id), "--count", str(calls), stdout=_Quiet())
        self.stdout.write(self.style.SUCCESS(
            f"Demo organization {org.name!r} ({org.id}). Log in at /login/ as {DEMO_EMAIL} / {DEMO_PASSWORD}"
        ))

    @transaction.atomic
    def _create(self) -> Organization:
        org, admin = organization_create(name=DEMO_ORG, admin_email=DEMO_EMAIL, admin_password=DEMO_PASSWORD)
        mark_verified(user=admin)  # the demo admin invites members from the first minute
        Membership.objects.create(
            organization=org, user=_user("member@demo.example"), role=Membership.Role.MEMBER
        )
        locations = [
            location_create(org=org, name=name, address=address, timezone=tz, phone_number=phone)
            for name, address, tz, phone in LOCATIONS
        ]
        for label, content, location_index in FACTS:
            location = locations[location_index] if location_index is not None else None
            fact_create(org=org, label=label, content=content, location=location)
        for name, email, phone, role in TEAM:
            team_member_create(org=org, name=name, email=email, phone_number=phone, role=role)
        team_member_create(org=org, name="Demo Admin", email=DEMO_EMAIL, role="Owner", user=admin)
        for phone, name, email, notes in CONTACTS:
            contact_create(org=org, phone_number=phone, name=name, email=email, notes=notes, source="dashboard")
        return org


def _user(email: str):
    return user_get_or_create(email=email, password=DEMO_PASSWORD)


class _Quiet:
    """Swallows simulate_calls' per-call JSON lines; seed_demo prints a summary instead."""

    def write(self, *_args, **_kwargs):
        pass

    def flush(self):
        pass
