from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from orgs.services import organization_create


class Command(BaseCommand):
    help = "Creates an organization and its first admin. Prints the new org's id on the last line."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--admin-email", required=True)
        parser.add_argument("--admin-password", required=True)

    def handle(self, *, name, admin_email, admin_password, **options):
        if not name.strip() or len(name) > 200:
            raise CommandError("--name must be 1 to 200 characters.")
        try:
            org, user = organization_create(name=name.strip(), admin_email=admin_email, admin_password=admin_password)
        except IntegrityError as exc:
            raise CommandError(f"Could not create the organization: {exc}") from exc
        self.stdout.write(f"Created organization {org.name!r} with admin {user.email}.")
        self.stdout.write(str(org.id))
