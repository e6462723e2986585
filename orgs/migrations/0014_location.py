"""Locations move back to orgs, beside the keys, members and invitations they limit (they had lived in knowledge since
knowledge 0001). The table keeps its name (`orgs_location`): only Django's state changes, no row, column, index or
constraint. Other apps' foreign keys follow (calls 0019, privacy 0003, alerts 0002, knowledge 0005), then knowledge's old
state goes (knowledge 0005)."""

import django.db.models.deletion
import uuid
from django.db import migrations, models

from core.migration_ops import move_content_types


class Migration(migrations.Migration):

    dependencies = [
        ('orgs', '0013_api_key_privacy_scope'),
        ('knowledge', '0004_location_weekly_hours'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Location',
                    fields=[
                        ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('name', models.CharField(max_length=200)),
                        ('address', models.CharField(max_length=5000)),
                        ('timezone', models.CharField(max_length=64)),
                        ('phone_number', models.CharField(max_length=32)),
                        ('weekly_hours', models.JSONField(blank=True, default=list)),
                        ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
                    ],
                    options={
                        'db_table': 'orgs_location',
                        'indexes': [models.Index(fields=['organization', '-created_at', '-id'], name='location_org_created_idx')],
                        'constraints': [models.UniqueConstraint(fields=('organization', 'name'), name='uniq_location_name_per_org')],
                    },
                ),
            ],
        ),
        move_content_types({"knowledge": ["location"]}, to="orgs"),
    ]
