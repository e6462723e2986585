"""Team members now belong to the knowledge app (knowledge 0001), in the same table. State only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge', '0001_initial'),
        ('notifications', '0002_invitation_kind'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.AlterField(
                    model_name='notificationrecipient',
                    name='team_member',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='knowledge.teammember'),
                ),
            ],
        ),
    ]
