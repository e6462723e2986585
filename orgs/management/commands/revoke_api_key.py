import uuid

from django.core.management.base import BaseCommand, CommandError

from orgs.models import ApiKey, Membership
from orgs.services import api_key_revoke


class Command(BaseCommand):
    help = "Revokes an API key at once, as the dashboard does (recorded as revoked by the org's first admin)."

    def add_arguments(self, parser):
        parser.add_argument("--key-id", required=True)

    def handle(self, *, key_id, **options):
        try:
            key = ApiKey.objects.select_related("organization").get(pk=uuid.UUID(key_id))
        except (ValueError, ApiKey.DoesNotExist):
            raise CommandError(f"No API key {key_id}.") from None
        if key.revoked_at:
            self.stdout.write(f"Key {key.id} was already revoked at {key.revoked_at.isoformat()}.")
            return
        admin = (
            Membership.objects.for_org(key.organization)
            .filter(role=Membership.Role.ADMIN)
            .order_by("created_at")
            .select_related("user")
            .first()
        )
        if admin is None:
            raise CommandError("The key's organization has no admin to record the revocation.")
        api_key_revoke(key=key, revoked_by=admin.user)
        self.stdout.write(f"Revoked key {key.id} ({key.key_prefix}...).")
