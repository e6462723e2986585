"""Full-text search over what a call was about: its summary (weight A) and what was said (weight B), as a stored
generated column with a GIN index, so `GET /v1/calls?q=` is an index read and nothing has to keep it up to date."""

from django.db import migrations

SQL = """
ALTER TABLE calls_call ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(summary, '')), 'A')
    || setweight(to_tsvector('english', coalesce(jsonb_path_query_array(transcript, '$[*].text')::text, '')), 'B')
) STORED;
CREATE INDEX call_search_idx ON calls_call USING gin (search_vector);
"""
REVERSE = """
DROP INDEX IF EXISTS call_search_idx;
ALTER TABLE calls_call DROP COLUMN IF EXISTS search_vector;
"""


class Migration(migrations.Migration):
    dependencies = [("calls", "0004_handled_by_key")]

    operations = [migrations.RunSQL(SQL, REVERSE)]
