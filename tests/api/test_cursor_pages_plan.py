"""A page deep in a list costs what the first page costs: the cursor's condition bounds the index scan, so the scan
starts at the cursor rather than at the newest row (before 2026-11-26 page n read n pages' rows and filtered them
out). The page's own SQL, EXPLAIN ANALYZEd over 20,000 contacts with fresh statistics."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.pagination import _cursor
from tests.support.plans import plan_nodes

CONTACTS = 20_000
LIMIT = 50


def _generate_contacts(org, count: int) -> None:
    """`count` contacts one second apart, and every tenth pair sharing a timestamp (ties broken by id)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO contacts_contact (id, created_at, updated_at, phone_number, phone_digits, name, source,
                                             organization_id)
               SELECT gen_random_uuid(), now() - make_interval(secs => n - n %% 10 / 9), now(),
                      '+1415' || lpad(n::text, 7, '0'), '1415' || lpad(n::text, 7, '0'), 'Contact ' || n, 'api', %s
                 FROM generate_series(1, %s) AS n""",
            [org.pk, count],
        )
        cursor.execute("ANALYZE contacts_contact")


def _rows_read(api, path: str) -> tuple[int, list]:
    """How many index entries the page's scan of contacts read (returned and filtered out), and the page."""
    with CaptureQueriesContext(connection) as captured:
        response = api.get(path)
    assert response.status_code == 200, response.content
    [sql] = [query["sql"] for query in captured.captured_queries if "contacts_contact" in query["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    scans = [node for node in plan_nodes(plan) if node.get("Relation Name") == "contacts_contact"]
    assert scans and all("Index" in node["Node Type"] for node in scans), plan
    read = sum(node["Actual Rows"] + node.get("Rows Removed by Filter", 0) for node in scans)
    return read, response.json()["data"]


def test_a_deep_page_reads_no_more_than_the_first(api, org):
    _generate_contacts(org, CONTACTS)
    first_read, first = _rows_read(api, f"/v1/contacts?limit={LIMIT}")
    with connection.cursor() as cursor:  # the row at which a client paging through 15,000 contacts would be
        cursor.execute("SELECT created_at, id FROM contacts_contact WHERE organization_id = %s"
                       " ORDER BY created_at DESC, id DESC OFFSET 15000 LIMIT 1", [org.pk])
        when, pk = cursor.fetchone()
    deep_read, deep = _rows_read(api, f"/v1/contacts?limit={LIMIT}&cursor={_cursor(when.isoformat(), pk, 'contacts')}")
    assert len(first) == len(deep) == LIMIT
    with connection.cursor() as cursor:
        cursor.execute("SELECT id::text FROM contacts_contact WHERE organization_id = %s"
                       " ORDER BY created_at DESC, id DESC OFFSET 15001 LIMIT %s", [org.pk, LIMIT])
        assert [item["id"] for item in deep] == [row[0] for row in cursor.fetchall()]
    assert first_read <= LIMIT + 1
    assert deep_read <= LIMIT + 3, f"the deep page read {deep_read} rows"
