"""The models of what the agent reads move here from orgs (locations, facts, team members) and calls (escalation
rules, calendars). Their tables keep their names (`db_table`), so only Django's state changes: no row moves and no
table, column, index or constraint is touched. The other apps' foreign keys follow in calls 0010 and
notifications 0003, and the old states go in orgs 0005 and calls 0010."""

import django.db.models.deletion
import uuid
from django.conf import settings
from django.db import migrations, models

from core.migration_ops import move_content_types

MOVED = {"orgs": ["location", "fact", "teammember"], "calls": ["escalationrule", "calendar"]}


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('orgs', '0004_idempotency_keys'),
        ('calls', '0009_call_knowledge'),
        ('contenttypes', '0002_remove_content_type_name'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
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
                    ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
                ],
                options={
                    'db_table': 'orgs_location',
                },
            ),
            migrations.CreateModel(
                name='Fact',
                fields=[
                    ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                    ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                    ('label', models.CharField(max_length=200)),
                    ('content', models.TextField()),
                    ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
                    ('location', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='facts', to='knowledge.location')),
                ],
                options={
                    'db_table': 'orgs_fact',
                },
            ),
            migrations.CreateModel(
                name='Calendar',
                fields=[
                    ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                    ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                    ('name', models.CharField(max_length=200)),
                    ('timezone', models.CharField(default='UTC', max_length=64)),
                    ('slot_minutes', models.PositiveIntegerField(default=30)),
                    ('weekly_hours', models.JSONField(blank=True, default=list)),
                    ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
                    ('location', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.location')),
                ],
                options={
                    'db_table': 'calls_calendar',
                },
            ),
            migrations.CreateModel(
                name='TeamMember',
                fields=[
                    ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                    ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                    ('name', models.CharField(max_length=200)),
                    ('email', models.EmailField(blank=True, max_length=254, null=True)),
                    ('phone_number', models.CharField(blank=True, max_length=32, null=True)),
                    ('role', models.CharField(blank=True, max_length=200, null=True)),
                    ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
                    ('user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ],
                options={
                    'db_table': 'orgs_teammember',
                },
            ),
            migrations.CreateModel(
                name='EscalationRule',
                fields=[
                    ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                    ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                    ('name', models.CharField(max_length=200)),
                    ('description', models.TextField(blank=True, default='')),
                    ('keywords', models.JSONField(blank=True, default=list)),
                    ('destination_type', models.CharField(choices=[('team_member', 'Team member'), ('phone', 'Phone')], max_length=16)),
                    ('destination_phone', models.CharField(blank=True, max_length=32, null=True)),
                    ('enabled', models.BooleanField(default=True)),
                    ('organization', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.organization')),
                    ('location', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='knowledge.location')),
                    ('destination_team_member', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='escalation_rules', to='knowledge.teammember')),
                ],
                options={
                    'db_table': 'calls_escalationrule',
                },
            ),
            migrations.AddIndex(
                model_name='location',
                index=models.Index(fields=['organization', '-created_at', '-id'], name='location_org_created_idx'),
            ),
            migrations.AddConstraint(
                model_name='location',
                constraint=models.UniqueConstraint(fields=('organization', 'name'), name='uniq_location_name_per_org'),
            ),
            migrations.AddIndex(
                model_name='fact',
                index=models.Index(fields=['organization', '-created_at', '-id'], name='fact_org_created_idx'),
            ),
            migrations.AddConstraint(
                model_name='fact',
                constraint=models.UniqueConstraint(fields=('organization', 'label'), name='uniq_fact_label_per_org'),
            ),
            migrations.AddConstraint(
                model_name='calendar',
                constraint=models.UniqueConstraint(fields=('organization', 'name'), name='uniq_calendar_name'),
            ),
            migrations.AddIndex(
                model_name='teammember',
                index=models.Index(fields=['organization', '-created_at', '-id'], name='team_member_org_created_idx'),
            ),
            migrations.AddConstraint(
                model_name='teammember',
                constraint=models.UniqueConstraint(condition=models.Q(('user__isnull', False)), fields=('organization', 'user'), name='uniq_team_member_user'),
            ),
            migrations.AddConstraint(
                model_name='escalationrule',
                constraint=models.UniqueConstraint(fields=('organization', 'name'), name='uniq_escalation_rule_name'),
            ),
            ],
        ),
        move_content_types(MOVED, to="knowledge"),
    ]
