"""`GET /v1/calls?fields.<name>=<value>` stays an index read as calls pile up: the page's own SQL, EXPLAINed over
many generated calls of two organizations (statistics fresh from ANALYZE), reads the GIN index on calls.fields
rather than scanning the org's calls."""

import json

from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge import services
from tests.support.plans import plan_nodes

CALLS = 100_000


def _generate_calls(org, count: int) -> None:
    """`count` completed calls of `org` in one statement: party_size cycles 1..1000, so one value is 0.1% of them."""
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO calls_call (id, organization_id, created_at, updated_at, runtime_call_id, status,
                   started_at, direction, scorable, outcome_tags, trail, transcript, quality_checks, facts_used,
                   unanswered_questions, redaction, fields)
               SELECT gen_random_uuid(), %s, now(), now(), 'gen-' || n, 'completed',
                   now() - make_interval(secs => n), 'inbound', true, '[]', '[]', '[]', '[]', '[]', '[]', '{}',
                   jsonb_build_object('party_size', jsonb_build_object(
                       'label', 'Party size', 'type', 'number', 'value', n %% 1000 + 1,
                       'evidence', null, 'evidence_verified', false))
               FROM generate_series(1, %s) AS n""",
            [org.pk, count],
        )


def test_the_field_filter_reads_the_gin_index_at_scale(api, org, other_org):
    services.call_field_create(org=org, name="party_size", label="Party size", type="number")
    _generate_calls(org, CALLS)
    _generate_calls(other_org, CALLS // 4)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE calls_call")
    with CaptureQueriesContext(connection) as captured:
        response = api.get("/v1/calls?fields.party_size=7&limit=20")
    assert response.status_code == 200
    page = response.json()["data"]
    assert len(page) == 20
    [sql] = [query["sql"] for query in captured.captured_queries if "@>" in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    scans = {(node["Node Type"], node.get("Relation Name"), node.get("Index Name")) for node in plan_nodes(plan)}
    assert ("Bitmap Index Scan", None, "call_fields_gin") in scans, json.dumps(plan)
    assert not any(kind == "Seq Scan" and table == "calls_call" for kind, table, _ in scans), json.dumps(plan)
    assert all(item["id"] in {str(pk) for pk in _sevens(org)} for item in page)


def _sevens(org):
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM calls_call WHERE organization_id = %s "
                       "AND (fields->'party_size'->>'value') = '7'", [org.pk])
        return [row[0] for row in cursor.fetchall()]
