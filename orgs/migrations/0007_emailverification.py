"""Addresses are confirmed before an account can invite (orgs.verification). Accounts that exist already keep what
they could do: each is recorded as confirmed now (they signed up, were invited by mail, or were made by an operator
before the rule)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone


def confirm_existing_accounts(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    EmailVerification = apps.get_model("orgs", "EmailVerification")
    now = timezone.now()
    EmailVerification.objects.bulk_create(
        [EmailVerification(user_id=pk, email=email or username, verified_at=now)
         for pk, email, username in User.objects.values_list("pk", "email", "username").iterator(chunk_size=1000)],
        batch_size=1000,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("orgs", "0006_knowledge_models_moved"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="EmailVerification",
            fields=[
                ("user", models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name="email_verification",
                    serialize=False, to=settings.AUTH_USER_MODEL,
                )),
                ("email", models.EmailField(max_length=254)),
                ("verified_at", models.DateTimeField()),
            ],
        ),
        migrations.RunPython(confirm_existing_accounts, migrations.RunPython.noop),
    ]
