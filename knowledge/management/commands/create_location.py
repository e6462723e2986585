import uuid

from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from knowledge.services import location_create
from orgs.models import Organization


class Command(BaseCommand):
    help = ("Creates a location of an organization (address and phone can be filled in later in the dashboard). "
            "Prints the new location's id on the last line.")

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help="The organization's id.")
        parser.add_argument("--name", required=True)
        parser.add_argument("--timezone", default=None, help="An IANA zone name (default: the organization's).")
        parser.add_argument("--address", default="")
        parser.add_argument("--phone-number", default="")

    def handle(self, *, org, name, timezone, address, phone_number, **options):
        try:
            organization = Organization.objects.get(pk=uuid.UUID(org))
        except (ValueError, Organization.DoesNotExist):
            raise CommandError(f"No organization {org}.") from None
        try:
            location = location_create(org=organization, name=name, timezone=timezone or organization.time_zone,
                                       address=address, phone_number=phone_number)
        except DomainError as exc:
            raise CommandError(f"{exc.message} {exc.details or ''}".strip()) from None
        self.stdout.write(f"Created location {location.name!r} ({location.timezone}) in {organization.name!r}.")
        self.stdout.write(str(location.id))
