"""Bodies nested too deep for `core.jsonparse`, and the answer every JSON endpoint gives them."""

import logging

from core import jsonparse

HUGE = "[" * 200_000  # the decoder's recursion overflows long before the end
JUST_OVER = "[" * (jsonparse.MAX_DEPTH + 1) + "]" * (jsonparse.MAX_DEPTH + 1)  # parses, but beyond the cap


def assert_refused_as_too_deep(response, caplog):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "Validation failed"
    assert body["details"]["fieldErrors"] == {}
    assert body["details"]["formErrors"] == [f"Malformed JSON body: JSON parse error - {jsonparse.TOO_DEEP}"]
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
