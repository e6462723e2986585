from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError

from orgs.services import organization_create
from orgs.verification import is_verified

User = get_user_model()


class Command(BaseCommand):
    help = (
        "Creates an organization and its first admin. A new admin account gets --admin-password and counts as "
        "confirmed (you vouch for the address). An address that has an account already is refused unless "
        "--attach-existing says to make that account the admin; its password is then left alone, so "
        "--admin-password is refused with it. Prints what it did, and the new org's id on the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--admin-email", required=True)
        parser.add_argument("--admin-password", help="the new admin account's password (not with --attach-existing)")
        parser.add_argument("--attach-existing", action="store_true",
                            help="make the existing account with --admin-email the admin (its password is kept)")

    def handle(self, *, name, admin_email, admin_password, attach_existing, **options):
        if not name.strip() or len(name) > 200:
            raise CommandError("--name must be 1 to 200 characters.")
        email = User.objects.normalize_email(admin_email.strip()).lower()
        existing = User.objects.filter(username=email).first()
        if existing is not None and not attach_existing:
            raise CommandError(f"An account with {email} exists already. To make it this organization's admin, "
                               "run again with --attach-existing (without --admin-password: its password is kept).")
        if existing is not None and admin_password is not None:
            raise CommandError(f"--admin-password cannot be used with --attach-existing: the account {email} keeps "
                               "its own password (its owner can reset it from the log-in page).")
        if existing is None and attach_existing:
            raise CommandError(f"--attach-existing: no account has {email}. Run without it, with --admin-password, "
                               "to create one.")
        if existing is None and not admin_password:
            raise CommandError("--admin-password is required to create the admin account.")
        try:
            org, user = organization_create(name=name.strip(), admin_email=email, admin_password=admin_password)
        except IntegrityError as exc:
            raise CommandError(f"Could not create the organization: {exc}") from exc
        if existing is None:
            self.stdout.write(f"Created organization {org.name!r} and a new admin account {user.email} with the "
                              "given password; its address counts as confirmed.")
        else:
            state = "confirmed" if is_verified(user) else "not confirmed yet (it cannot invite members until it is)"
            self.stdout.write(f"Created organization {org.name!r} with the existing account {user.email} as admin; "
                              f"its password was not changed; its address is {state}.")
        self.stdout.write(str(org.id))
