"""Schemathesis against a live gunicorn with a write key (issue 17): every check (`--checks all`: no 5xx, statuses
and bodies as documented, schema-valid requests accepted, schema-violating ones refused) over the whole /v1 schema.

Bounded (a fixed seed and a few examples per operation) so that `make test` stays quick; a longer exploratory run is
in the README ("API"). The hooks (tests/support/schemathesis_hooks.py) name the few rules no JSON Schema can state.
"""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests.support.gunicorn import running_gunicorn
from tests.support.runtime import Runtime

pytestmark = [pytest.mark.schema_fuzz, pytest.mark.django_db(transaction=True)]

EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", 15))
SEED = os.environ.get("SCHEMA_FUZZ_SEED", "20261124")


def _some_data(org):
    runtime = Runtime(org)
    for outcome in ("order", "message", "callback"):
        call_id, _ = runtime.start()
        runtime.complete(call_id, outcome=outcome)


def test_schemathesis_finds_nothing(org, write_key, tmp_path):
    _some_data(org)
    limits = {"RATE_LIMIT_READS_PER_MINUTE": "1000000", "RATE_LIMIT_WRITES_PER_MINUTE": "1000000"}
    with running_gunicorn(tmp_path / "gunicorn.log", WEB_WORKERS="1", **limits) as port:
        run = subprocess.run(
            [sys.executable, "-m", "schemathesis.cli", "run", f"http://127.0.0.1:{port}/api/openapi.json",
             "--checks", "all", "--max-examples", str(EXAMPLES), "--seed", SEED, "--workers", "1", "--no-color",
             "-H", f"Authorization: Bearer {write_key[1]}"],
            cwd=tmp_path,  # its run cache (it replays past failures first) stays with this test
            capture_output=True, text=True, timeout=600,
            env={**os.environ, "SCHEMATHESIS_HOOKS": "tests.support.schemathesis_hooks",
                 "PYTHONPATH": str(settings.BASE_DIR)},
        )
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]
    assert " generated" in run.stdout and "Tested: " in run.stdout
