"""Escalation rules and calendars now belong to the knowledge app (knowledge 0001), in the same tables: the calls
models' foreign keys point at them there and the old states go. State only: the database is not touched."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0009_call_knowledge'),
        ('knowledge', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='booking',
                    name='calendar',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='bookings', to='knowledge.calendar'),
                ),
                migrations.AlterField(
                    model_name='escalation',
                    name='rule',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='escalations', to='knowledge.escalationrule'),
                ),
                migrations.AlterField(
                    model_name='booking',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.location'),
                ),
                migrations.AlterField(
                    model_name='call',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.location'),
                ),
                migrations.AlterField(
                    model_name='callbackrequest',
                    name='requested_team_member',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.teammember'),
                ),
                migrations.AlterField(
                    model_name='escalation',
                    name='destination_team_member',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.teammember'),
                ),
                migrations.AlterField(
                    model_name='message',
                    name='for_team_member',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='knowledge.teammember'),
                ),
                migrations.DeleteModel(
                    name='Calendar',
                ),
                migrations.DeleteModel(
                    name='EscalationRule',
                ),
            ],
        ),
    ]
