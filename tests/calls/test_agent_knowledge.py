"""What the agent knew (issue 14, item 4): the completion's knowledge version, the facts it relied on (kept as they
were, through a later rename or delete) and the questions it could not answer, in GET /v1/calls/{id} and the
dashboard; "used in N calls (30 days)" per fact; the Unanswered questions page and its prefilled fact form."""

from datetime import timedelta

import pytest
from django.utils import timezone

from calls.models import Call
from devtools.simulation import RuntimeClient, Simulator
from knowledge.models import Fact
from knowledge.selectors import knowledge_version
from knowledge.services import fact_create, fact_delete, fact_update
from tests.support.runtime import Runtime, iso


@pytest.fixture
def facts(org):
    return [fact_create(org=org, label="Hours", content="9-5"), fact_create(org=org, label="Parking", content="Lot")]


def complete(runtime, **knowledge):
    call_id, _ = runtime.start(started_at=timezone.now() - timedelta(minutes=5))
    response = runtime.complete(call_id, ended_at=iso(timezone.now()), **knowledge)
    return call_id, response


def test_the_call_shows_what_the_agent_knew_through_renames_and_deletes(api, org, facts):
    runtime = Runtime(org)
    version = knowledge_version(org)
    call_id, response = complete(runtime, knowledge_version=version,
                                 facts_used=[str(facts[1].pk), str(facts[0].pk), str(facts[1].pk)],
                                 unanswered_questions=["Do you have gluten-free pasta? ", "Is there valet?"])
    assert response.status_code == 200, response.content
    call = runtime.call(call_id)
    expected = {"knowledge_version": version,
                "facts_used": [{"id": str(facts[1].pk), "label": "Parking"},
                               {"id": str(facts[0].pk), "label": "Hours"}],
                "unanswered_questions": ["Do you have gluten-free pasta?", "Is there valet?"]}
    detail = api.get(f"/v1/calls/{call.pk}").json()["data"]
    assert {key: detail[key] for key in expected} == expected
    assert {key: response.json()["data"][key] for key in expected} == expected  # the runtime's answer too

    fact_update(fact=facts[1], label="Car park")
    fact_delete(fact=facts[0])
    detail = api.get(f"/v1/calls/{call.pk}").json()["data"]
    assert detail["facts_used"] == expected["facts_used"]  # history is not rewritten


def test_without_them_the_fields_are_empty(api, org):
    call_id, _ = complete(Runtime(org))
    detail = api.get(f"/v1/calls/{Runtime(org).call(call_id).pk}").json()["data"]
    assert (detail["knowledge_version"], detail["facts_used"], detail["unanswered_questions"]) == (None, [], [])


@pytest.mark.parametrize(("knowledge", "field"), [
    ({"facts_used": ["not-a-uuid"]}, "facts_used"),
    ({"unanswered_questions": ["x" * 501]}, "unanswered_questions"),
    ({"unanswered_questions": [f"q{i}" for i in range(21)]}, "unanswered_questions"),
    ({"unanswered_questions": "why?"}, "unanswered_questions"),
    ({"knowledge_version": -1}, "knowledge_version"),
    ({"knowledge_version": "3"}, "knowledge_version"),
])
def test_bad_knowledge_fields_are_400_and_the_call_stays_open(org, knowledge, field):
    runtime = Runtime(org)
    call_id, response = complete(runtime, **knowledge)
    assert response.status_code == 400
    assert field in "".join(response.json()["details"]["fieldErrors"])
    assert runtime.call(call_id).status == Call.Status.IN_PROGRESS


def test_another_orgs_fact_is_refused(org, other_org):
    theirs = fact_create(org=other_org, label="Secret", content="x")
    runtime = Runtime(org)
    call_id, response = complete(runtime, facts_used=[str(theirs.pk)])
    assert (response.status_code, response.json()["details"]["fieldErrors"]) == (
        400, {"facts_used": [f"Not a fact of this organization: {theirs.pk}."]})
    assert runtime.call(call_id).status == Call.Status.IN_PROGRESS


def test_the_knowledge_page_counts_uses_in_the_last_30_days(admin_client, org, facts):
    runtime = Runtime(org)
    complete(runtime, facts_used=[str(facts[0].pk)])
    complete(runtime, facts_used=[str(facts[0].pk), str(facts[1].pk)])
    old_id, _ = complete(runtime, facts_used=[str(facts[1].pk)])
    Call.objects.filter(pk=runtime.call(old_id).pk).update(started_at=timezone.now() - timedelta(days=31))
    page = admin_client.get("/knowledge/").content.decode()
    hours_row = page[page.index("<strong>Hours</strong>"):][:1500]
    parking_row = page[page.index("<strong>Parking</strong>"):][:1500]
    assert "used in 2 calls" in hours_row and "used in 1 call " in parking_row


def test_unanswered_questions_newest_first_and_a_prefilled_fact_form(admin_client, org):
    runtime = Runtime(org)
    first_id, _ = complete(runtime, unanswered_questions=["Do you sell gift cards?"])
    Call.objects.filter(runtime_call_id=first_id).update(ended_at=timezone.now() - timedelta(hours=1))
    second_id, _ = complete(runtime, unanswered_questions=["Is the patio dog-friendly?"])
    page = admin_client.get("/knowledge/unanswered/").content.decode()
    assert page.index("Is the patio dog-friendly?") < page.index("Do you sell gift cards?")
    assert f"/calls/{runtime.call(second_id).pk}" in page
    assert "/knowledge/new/?label=Is%20the%20patio%20dog-friendly%3F" in page
    form = admin_client.get("/knowledge/new/?label=Is%20the%20patio%20dog-friendly%3F").content.decode()
    assert 'value="Is the patio dog-friendly?"' in form
    call_page = admin_client.get(f"/calls/{runtime.call(second_id).pk}").content.decode()
    assert 'data-testid="call-unanswered"' in call_page and "Is the patio dog-friendly?" in call_page


def test_the_simulator_reports_facts_and_unanswered_questions(org, facts):
    simulator = Simulator(RuntimeClient(org_id=org.pk), seed=7)
    for _ in range(8):
        simulator._scenario_info()
    calls = Call.objects.for_org(org)
    assert all(call.facts_used and call.knowledge_version is not None for call in calls)
    assert {fact["id"] for call in calls for fact in call.facts_used} <= {str(f.pk) for f in Fact.objects.all()}
    assert any(call.unanswered_questions for call in calls)
