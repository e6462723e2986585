"""Counting the queries of a request: a list's cost must not grow with its page."""

from django.db import connection
from django.test.utils import CaptureQueriesContext


def queries_per_page(client, path: str, limits, params=None) -> tuple[list[int], list[int]]:
    """`GET path` once per `limit` in `limits`: (the queries of each request, the items of each page)."""
    counts, sizes = [], []
    for limit in limits:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(path, {**(params or {}), "limit": limit})
        assert response.status_code == 200, response.content
        counts.append(len(queries))
        sizes.append(len(response.json()["data"]))
    return counts, sizes
