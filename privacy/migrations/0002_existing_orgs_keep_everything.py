"""Organizations that exist before retention keep everything until an admin chooses (the dashboard says nothing
expires yet): a policy row with null days each. A new organization has no row, so it gets the defaults
(privacy.models: 90 days of recordings, 365 of transcripts)."""

from django.db import migrations


def keep_everything(apps, schema_editor):
    Organization = apps.get_model("orgs", "Organization")
    RetentionPolicy = apps.get_model("privacy", "RetentionPolicy")
    RetentionPolicy.objects.bulk_create(
        [RetentionPolicy(organization_id=pk, recordings_days=None, transcripts_days=None)
         for pk in Organization.objects.values_list("pk", flat=True)],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):

    dependencies = [
        ("privacy", "0001_retention_erasure_suppression"),
    ]

    operations = [migrations.RunPython(keep_everything, migrations.RunPython.noop)]
