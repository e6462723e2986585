"""The OpenAPI document is byte-identical to a reviewed copy, so no refactoring changes the API unnoticed.

`tests/api/openapi.snapshot.json` holds the exact bytes `/api/openapi.json` serves under the test settings. A change
that is meant to alter the API (a new field, endpoint, error example, description) regenerates the copy in the same
commit, and the diff of the copy is reviewed with the code:

    source .helper-env  # or any environment the tests run in
    REGENERATE_OPENAPI_SNAPSHOT=1 .venv/bin/pytest -q tests/api/test_openapi_snapshot.py  # rewrites the copy, fails
    .venv/bin/pytest -q tests/api/test_openapi_snapshot.py  # passes again
    git diff tests/api/openapi.snapshot.json  # check that only the intended change is in it

The regenerating run always fails, so a CI run with the variable set by mistake cannot pass.
"""

import os
from pathlib import Path

import pytest
from django.test import Client

SNAPSHOT = Path(__file__).resolve().parent / "openapi.snapshot.json"


def test_openapi_document_is_byte_identical_to_the_reviewed_snapshot(db):
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    if os.environ.get("REGENERATE_OPENAPI_SNAPSHOT") == "1":
        SNAPSHOT.write_bytes(response.content)
        pytest.fail(f"{SNAPSHOT.name} rewritten: review its diff, commit it, and run again without the variable")
    assert response.content == SNAPSHOT.read_bytes(), (
        f"/api/openapi.json differs from {SNAPSHOT.name}; if the API change is intended, regenerate it (see the "
        "module docstring) in the same commit"
    )
