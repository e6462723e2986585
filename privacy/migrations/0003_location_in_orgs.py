"""Locations now belong to orgs (orgs 0014): this app's state follows. State only: the table and its foreign keys are
unchanged."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('orgs', '0014_location'),
        ('privacy', '0002_existing_orgs_keep_everything'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='locationretention',
                    name='location',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='orgs.location'),
                ),
            ],
        ),
    ]
