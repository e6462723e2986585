"""The call fields a completion reports, stored on the call, and the GIN index that `?fields.<name>=` reads."""

import django.contrib.postgres.indexes
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0010_knowledge_models_moved'),
    ]

    operations = [
        migrations.AddField(
            model_name='call',
            name='fields',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddIndex(
            model_name='call',
            index=django.contrib.postgres.indexes.GinIndex(fields=['fields'], name='call_fields_gin', opclasses=['jsonb_path_ops']),
        ),
    ]
