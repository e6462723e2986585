"""Locations now belong to orgs (orgs 0014): this app's state follows. State only: the table and its foreign keys are
unchanged."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0018_location_in_orgs'),
        ('knowledge', '0004_location_weekly_hours'),
        ('alerts', '0002_location_in_orgs'),
        ('orgs', '0014_location'),
        ('privacy', '0003_location_in_orgs'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='calendar',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='orgs.location'),
                ),
                migrations.AlterField(
                    model_name='escalationrule',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.location'),
                ),
                migrations.AlterField(
                    model_name='fact',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='facts', to='orgs.location'),
                ),
                migrations.DeleteModel(
                    name='Location',
                ),
            ],
        ),
    ]
