"""Deeply nested JSON is a 400 `Validation failed` with a `formErrors` message on /v1 and the agent runtime, never
a 500 with a RecursionError in the log; nesting up to the cap still parses. (The meetings status hook and the
outcome editor: tests/meetings/test_progress.py and test_dashboard.py.)"""

import json

import pytest

from core import jsonparse
from tests.support.nested_json import HUGE, JUST_OVER, assert_refused_as_too_deep
from tests.support.runtime import Runtime


@pytest.mark.parametrize("payload", [HUGE, JUST_OVER, '{"name": ' + JUST_OVER + "}"])
def test_v1_refuses_deep_nesting_with_400(api, caplog, payload):
    response = api.generic("POST", "/v1/contacts", payload, content_type="application/json")
    assert_refused_as_too_deep(response, caplog)


@pytest.mark.parametrize("payload", [HUGE, JUST_OVER])
@pytest.mark.parametrize("path", ["/calls", "/meetings"])
def test_the_runtime_refuses_deep_nesting_with_400(org, caplog, payload, path):
    runtime = Runtime(org)
    response = runtime.client.generic("POST", runtime.prefix + path, payload, content_type="application/json")
    assert_refused_as_too_deep(response, caplog)


def test_nesting_up_to_the_cap_parses():
    deepest = "[" * jsonparse.MAX_DEPTH + "]" * jsonparse.MAX_DEPTH
    assert jsonparse.loads(deepest) == json.loads(deepest)
    wide = json.dumps([[i, {"k": [i]}] for i in range(1000)])  # many brackets, shallow: walked, accepted
    assert jsonparse.loads(wide) == json.loads(wide)
    with pytest.raises(ValueError, match="nested at most"):
        jsonparse.loads('{"a": ' + JUST_OVER + "}")
