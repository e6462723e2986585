"""Locations, facts and team members now belong to the knowledge app (knowledge 0001), in the same tables: their
old states go once every foreign key points at the new ones (calls 0010, notifications 0003). State only."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('orgs', '0005_idempotency_answers_encrypted'),
        ('knowledge', '0001_initial'),
        ('calls', '0010_knowledge_models_moved'),
        ('notifications', '0003_team_member_in_knowledge'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(
                    name='Fact',
                ),
                migrations.DeleteModel(
                    name='TeamMember',
                ),
                migrations.DeleteModel(
                    name='Location',
                ),
            ],
        ),
    ]
