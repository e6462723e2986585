import uuid

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from core.errors import DomainError
from orgs.models import ApiKey, Organization
from orgs.services import api_key_create

SCOPES = {"read": ApiKey.Scope.READ, "read,write": ApiKey.Scope.READ_WRITE, "read,audit": ApiKey.Scope.READ_AUDIT,
          "read,write,audit": ApiKey.Scope.READ_WRITE_AUDIT, "read,privacy": ApiKey.Scope.READ_PRIVACY,
          "read,write,privacy": ApiKey.Scope.READ_WRITE_PRIVACY, "read,audit,privacy": ApiKey.Scope.READ_AUDIT_PRIVACY,
          "read,write,audit,privacy": ApiKey.Scope.READ_WRITE_AUDIT_PRIVACY}


class Command(BaseCommand):
    help = "Creates an API key as an org admin would. Prints the plaintext key, once, on the last line."

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help="The organization's id.")
        parser.add_argument("--created-by", required=True, help="E-mail of an admin of that organization.")
        parser.add_argument("--name", required=True)
        parser.add_argument("--scopes", required=True, choices=sorted(SCOPES))
        parser.add_argument("--locations", default=None, metavar="ID[,ID...]",
                            help="Limit the key to these locations of the organization (default: all of it).")

    def handle(self, *, org, created_by, name, scopes, locations, **options):
        try:
            organization = Organization.objects.get(pk=uuid.UUID(org))
        except (ValueError, Organization.DoesNotExist):
            raise CommandError(f"No organization {org}.") from None
        user = get_user_model().objects.filter(username=created_by.strip().lower()).first()
        location_ids = None if locations is None else [part.strip() for part in locations.split(",") if part.strip()]
        try:
            key, plaintext = api_key_create(
                org=organization, created_by=user, name=name, scope=SCOPES[scopes], location_ids=location_ids,
            )
        except DomainError as exc:
            raise CommandError(f"{exc.message} {exc.details or ''}".strip()) from None
        self.stdout.write(f"Created key {key.id} ({key.key_prefix}...). It will not be shown again:")
        self.stdout.write(plaintext)
