"""Organizations get a time zone: each existing one takes its first location's (the oldest), else UTC."""

from django.db import migrations, models

BACKFILL = """
UPDATE orgs_organization o SET time_zone = first.timezone
FROM (
    SELECT DISTINCT ON (organization_id) organization_id, timezone
    FROM orgs_location ORDER BY organization_id, created_at, id
) first
WHERE first.organization_id = o.id
"""


class Migration(migrations.Migration):

    dependencies = [
        ('orgs', '0008_api_key_audit_scope'),
        ('knowledge', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='organization',
            name='time_zone',
            field=models.CharField(default='UTC', max_length=64),
        ),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
