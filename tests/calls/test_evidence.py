"""Evidence quotes are capped at ingest (count and length: 400 beyond, nothing written); where they appear in the
transcript is computed once, when the call is stored, and the call page only reads it; a call stored without marks
is searched for the quotes within the caps only."""

import re

import pytest

from calls import evidence
from calls.evidence import evidence_marks
from calls.models import Call
from tests.support.clients import logged_in
from tests.support.fielderrors import reported_at
from tests.support.runtime import TRANSCRIPT

CAP_PER_CHECK, CAP_PER_CALL, CAP_CHARS = (
    evidence.MAX_QUOTES_PER_CHECK, evidence.MAX_QUOTES_PER_CALL, evidence.MAX_QUOTE_CHARS,
)


def _checks(quotes_per_check: list[int], quote: str = "ready in about 25 minutes") -> list[dict]:
    return [{"name": f"Check {i}", "verdict": "pass", "evidence": [quote] * n} for i, n in enumerate(quotes_per_check)]


@pytest.mark.parametrize(
    ("checks", "field"),
    [
        (_checks([CAP_PER_CHECK + 1]), "quality_checks.0.evidence"),
        (_checks([1], quote="x" * (CAP_CHARS + 1)), "quality_checks.0.evidence.0"),
        (_checks([CAP_PER_CHECK] * (CAP_PER_CALL // CAP_PER_CHECK) + [1]), "quality_checks"),
    ],
    ids=["quotes-per-check", "quote-length", "quotes-per-call"],
)
def test_evidence_beyond_the_caps_is_400_and_nothing_is_written(runtime, checks, field):
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, outcome="info", quality_checks=checks)
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "Validation failed" and list(body["details"]["fieldErrors"]) == ["quality_checks"]
    assert reported_at(body["details"], field), body
    assert runtime.call(call_id).status == "in_progress"


def test_evidence_at_the_caps_is_accepted(runtime):
    call_id, _ = runtime.start()
    checks = _checks([CAP_PER_CHECK] * (CAP_PER_CALL // CAP_PER_CHECK))
    checks[0]["evidence"][0] = "x" * CAP_CHARS
    assert runtime.complete(call_id, outcome="info", quality_checks=checks).status_code == 200


def test_the_marks_are_stored_with_the_call_and_the_page_only_reads_them(runtime, org, admin, monkeypatch):
    call_id, _ = runtime.start()
    assert runtime.complete(call_id).status_code == 200
    call = runtime.call(call_id)
    # Check 1 quotes turn 3, check 2 turn 4 (case and spacing aside); check 3's quote is nowhere.
    ready, name = TRANSCRIPT[2]["text"].index("ready in about"), TRANSCRIPT[3]["text"].index("my name is")
    assert call.evidence_marks == [[], [], [[ready, ready + 25, 1]], [[name, name + 23, 2]]]

    def no_search(*args, **kwargs):
        raise AssertionError("the call page searched the transcript")

    monkeypatch.setattr("dashboard.pages.calls.evidence_marks", no_search)
    monkeypatch.setattr("calls.evidence.evidence_marks", no_search)
    page = logged_in(admin).get(f"/calls/{call.pk}").content.decode()
    assert re.findall(r'<mark title="Evidence for check (\d)" data-check="\d">(.*?)</mark>', page) == [
        ("1", "ready in about 25 minutes"), ("2", "my name is Jordan Miles"),
    ]
    assert '<a href="#turn-3">“ready in about 25 minutes”</a>' in page
    assert '<a href="#turn-4">“my name is Jordan Miles”</a>' in page


def test_a_call_stored_without_marks_is_searched_within_the_caps_only(org, admin):
    words = [f"w{i}z" for i in range(2 * CAP_PER_CALL)]  # none is a prefix of another
    call = Call.objects.create(
        organization=org, runtime_call_id="stored-before-the-caps", started_at="2026-11-20T12:00:00Z",
        transcript=[{"speaker": "caller", "text": " ".join(words), "offset_seconds": 0}],
        quality_checks=[
            {"name": "Many quotes", "verdict": "pass", "evidence": words, "verification": "verified"},
            *({"name": f"One quote {w}", "verdict": "pass", "evidence": [w], "verification": "verified"}
              for w in words),
        ],
    )
    assert call.evidence_marks is None
    page = logged_in(admin).get(f"/calls/{call.pk}").content.decode()
    marked = re.findall(r'data-check="(\d+)">(w\d+z)</mark>', page)
    # The first check's first CAP_PER_CHECK quotes, then one quote per check until CAP_PER_CALL quotes in all.
    expected = [("1", w) for w in words[:CAP_PER_CHECK]]
    expected += [(str(2 + i), w) for i, w in enumerate(words) if CAP_PER_CHECK <= i < CAP_PER_CALL - CAP_PER_CHECK]
    assert marked == expected


def test_a_quote_is_marked_at_its_first_places_only_and_across_whitespace_and_case():
    turns = [{"text": "Yes  yes\tYES. " * evidence.MARKS_PER_QUOTE}, {"text": "Ready\n in   ABOUT 25"}]
    marks = evidence_marks(turns, [{"evidence": ["yes"]}, {"evidence": ["ready in about"]}])
    assert len(marks[0]) == evidence.MARKS_PER_QUOTE and marks[0][:3] == [[0, 3, 1], [5, 8, 1], [9, 12, 1]]
    assert marks[1] == [[0, 17, 2]]
