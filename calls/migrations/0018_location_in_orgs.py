"""Locations now belong to orgs (orgs 0014): this app's state follows. State only: the table and its foreign keys are
unchanged."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0017_rollup_ignores_content'),
        ('orgs', '0014_location'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='booking',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='orgs.location'),
                ),
                migrations.AlterField(
                    model_name='call',
                    name='location',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='orgs.location'),
                ),
            ],
        ),
    ]
