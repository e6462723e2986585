"""GET /v1/calls: the filters the dashboard has, and `q`, full-text search over the summary and the transcript
(phrases, prefixes), newest first and paginated, never across organizations."""

import pytest

from calls.models import Call


def validation(field_errors):
    return {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


def complete(runtime, **overrides):
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, **overrides).status_code in (200, 201)
    return str(runtime.call(call_id).pk)


def ids(client, **params):
    response = client.get("/v1/calls", params)
    assert response.status_code == 200, response.json()
    return [c["id"] for c in response.json()["data"]]


@pytest.fixture
def calls(runtime, other_runtime):
    gluten = complete(runtime, summary="Asked whether the crust is gluten-free.", transcript=[
        {"speaker": "caller", "text": "Do you have a gluten free crust for the margherita?", "offset_seconds": 1},
    ])
    pepperoni = complete(runtime)  # the default transcript: a large pepperoni pizza for pickup
    theirs = complete(other_runtime)  # the same words, another org
    return {"gluten": gluten, "pepperoni": pepperoni, "theirs": theirs}


def test_a_phrase_from_the_transcript_finds_the_call_and_not_another_orgs(read_api, calls):
    assert ids(read_api, q='"large pepperoni pizza"') == [calls["pepperoni"]]
    assert ids(read_api, q='"pizza pepperoni large"') == []  # a phrase keeps its order


def test_words_match_stemmed_anywhere_in_summary_or_transcript(read_api, calls):
    assert ids(read_api, q="crusts gluten") == [calls["gluten"]]
    assert ids(read_api, q="tiramisu") == [calls["pepperoni"]]  # from the summary
    assert ids(read_api, q="gluten tiramisu") == []


def test_a_prefix_query(read_api, calls):
    assert ids(read_api, q="peppe*") == [calls["pepperoni"]]
    assert ids(read_api, q="marg*") == [calls["gluten"]]
    assert ids(read_api, q="peppe* marg*") == []


def test_tsquery_syntax_in_q_is_just_text(read_api, calls):
    for q in ["pizza & !pickup", "pepperoni:*", "(pickup | x)", "'", "\\", "*", "&&&"]:
        assert read_api.get("/v1/calls", {"q": q}).status_code == 200


def test_search_results_page_newest_first(read_api, runtime, calls):
    later = complete(runtime)
    first = read_api.get("/v1/calls", {"q": "pepperoni", "limit": 1}).json()
    second = read_api.get("/v1/calls", {"q": "pepperoni", "limit": 1, "cursor": first["next_cursor"]}).json()
    assert {first["data"][0]["id"], second["data"][0]["id"]} == {later, calls["pepperoni"]}
    assert second["has_more"] is False


def test_a_q_over_200_characters_is_400(read_api):
    response = read_api.get("/v1/calls", {"q": "x" * 201})
    assert (response.status_code, response.json()) == (
        400, validation({"q": ["Ensure this field has no more than 200 characters."]}))


def test_filters(read_api, runtime, calls):
    robo = complete(runtime, classification="robocall", outcome="info")
    Call.objects.filter(pk=calls["gluten"]).update(direction="outbound", disposition="transferred")
    assert ids(read_api, classification="robocall") == [robo]
    assert robo not in ids(read_api, scorable="true") and ids(read_api, scorable="false") == [robo]
    assert ids(read_api, direction="outbound") == [calls["gluten"]]
    assert ids(read_api, disposition="transferred") == [calls["gluten"]]
    assert ids(read_api, status="in_progress") == []
    assert ids(read_api, has_recording="true") == []
    runtime.upload(runtime.call(Call.objects.get(pk=calls["pepperoni"]).runtime_call_id).runtime_call_id)
    assert ids(read_api, has_recording="true") == [calls["pepperoni"]]


@pytest.mark.parametrize(("params", "errors"), [
    ({"classification": "spam"}, {"classification": ['"spam" is not a valid choice.']}),
    ({"scorable": "sometimes"}, {"scorable": ["Must be a valid boolean."]}),
    ({"has_recording": "2"}, {"has_recording": ["Must be a valid boolean."]}),
    ({"direction": "sideways"}, {"direction": ['"sideways" is not a valid choice.']}),
    ({"status": "done"}, {"status": ['"done" is not a valid choice.']}),
])
def test_bad_filter_values_are_400(read_api, params, errors):
    response = read_api.get("/v1/calls", params)
    assert (response.status_code, response.json()) == (400, validation(errors))
