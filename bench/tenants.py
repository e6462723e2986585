"""Two tenants for the isolation benches (`webhook_tests`, `export_isolation`): org A, whose requests are measured,
and org B, which misbehaves."""

import os
import time

# Out of the way: the benches measure the web tier and the caps under test, not the request rate limits.
RATE_LIMITS = ("RATE_LIMIT_READS_PER_MINUTE", "RATE_LIMIT_WRITES_PER_MINUTE", "RATE_LIMIT_ORG_READS_PER_MINUTE",
               "RATE_LIMIT_ORG_WRITES_PER_MINUTE")


def two_tenants(database_url: str, *, scope: str) -> list[tuple]:
    """Configures Django for `database_url` with the bench settings, migrates, and returns [(org A, key A), (org B,
    key B)]: each organization (created on the first run) with one new API key of `scope`."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    for name in RATE_LIMITS:
        os.environ.setdefault(name, "1000000000")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from orgs.models import ApiKey, Organization
    from orgs.services import api_key_create, organization_create

    call_command("migrate", verbosity=0)
    tenants = []
    for name in ("Bench Tenant A", "Bench Tenant B"):
        org = Organization.objects.filter(name=name).first()
        if org is None:
            org, _ = organization_create(name=name, admin_email=f"{name[-1].lower()}@tenants.example")
        admin = org.memberships.get().user
        # Earlier runs' keys revoked: each run makes one, and an organization has at most 50 active.
        ApiKey.objects.filter(organization=org, revoked_at__isnull=True).update(revoked_at=timezone.now())
        tenants.append((org, api_key_create(org=org, created_by=admin, name=f"bench {int(time.time())}",
                                            scope=scope)[1]))
    return tenants
