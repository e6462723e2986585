"""Call fields: what the organization wants pulled out of each call."""

import django.contrib.postgres.fields
import django.db.models.deletion
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge', '0001_initial'),
        ('orgs', '0008_api_key_audit_scope'),
    ]

    operations = [
        migrations.CreateModel(
            name='CallField',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('name', models.CharField(max_length=64)),
                ('label', models.CharField(max_length=200)),
                ('description', models.TextField(blank=True, default='')),
                ('type', models.CharField(choices=[('string', 'Text'), ('number', 'Number'), ('boolean', 'Yes / no'), ('date', 'Date'), ('enum', 'One of a list')], max_length=16)),
                ('choices', models.JSONField(blank=True, default=list)),
                ('required', models.BooleanField(default=False)),
                ('location_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, null=True, size=None)),
                ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
            ],
            options={
                'indexes': [models.Index(fields=['organization', '-created_at', '-id'], name='call_field_org_created_idx')],
                'constraints': [models.UniqueConstraint(fields=('organization', 'name'), name='uniq_call_field_name_per_org')],
            },
        ),
    ]
