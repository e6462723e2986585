"""fieldErrors maps a field name to its messages (docs/api.md#errors; Zod's `flatten()`): a problem inside a list
or an object is reported under the top-level field, with the item's position (`Item 0: `) or the inner key leading
the message, on /v1 and on the runtime's API alike. Never a dotted path such as `keywords.0`."""

import pytest

from api.errors import by_field_name
from calls.models import CallbackRequest
from knowledge.models import Calendar, EscalationRule, TeamMember
from tests.support.runtime import Runtime

LONG = "Ensure this field has no more than 100 characters."


def _validation(field_errors, form_errors=()):
    return {"error": "Validation failed", "details": {"formErrors": list(form_errors), "fieldErrors": field_errors}}


def _rule(org, **changes):
    member = TeamMember.objects.create(organization=org, name="Ana", phone_number="+14155550100")
    return {"name": "Manager", "keywords": ["manager"], "destination_type": "team_member",
            "destination_team_member_id": str(member.pk), **changes}


def test_a_keyword_too_long_is_reported_under_keywords_with_its_position(api, org):
    response = api.post("/v1/escalation-rules", _rule(org, keywords=["fine", "x" * 101, "y" * 101]), format="json")
    assert response.status_code == 400
    assert response.json() == _validation({"keywords": [f"Item 1: {LONG}", f"Item 2: {LONG}"]})
    assert not EscalationRule.objects.exists()


def test_a_keyword_too_long_in_a_patch_is_reported_under_keywords(api, org):
    rule = api.post("/v1/escalation-rules", _rule(org), format="json").json()["data"]
    response = api.patch(f"/v1/escalation-rules/{rule['id']}", {"keywords": ["x" * 101]}, format="json")
    assert response.json() == _validation({"keywords": [f"Item 0: {LONG}"]})
    assert EscalationRule.objects.get().keywords == ["manager"]


@pytest.mark.parametrize("hours", [[5], [{"day": "mon", "start": "09:00", "end": "08:00"}], ["mon 9-5"]])
def test_weekly_hours_problems_are_reported_under_weekly_hours(api, org, hours):
    response = api.post("/v1/calendars", {"name": "Tables", "timezone": "UTC", "weekly_hours": hours}, format="json")
    assert response.status_code == 400
    errors = response.json()["details"]["fieldErrors"]
    assert list(errors) == ["weekly_hours"]
    assert all(message.startswith("Item 0: ") for message in errors["weekly_hours"])
    assert not Calendar.objects.exists()


def test_a_runtime_tool_event_names_its_data_field(org):
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    response = runtime.event(call_id, type="callback_requested", label="Callback",
                             data={"reason": "Call me", "requested_window": "custom"})
    assert response.status_code == 400
    assert response.json() == _validation(
        {"data": ["custom_window: custom_window is required when requested_window is 'custom', and only then."]})
    response = runtime.event(call_id, type="callback_requested", label="Callback", data={"reason": "r" * 5001})
    errors = response.json()["details"]["fieldErrors"]
    assert list(errors) == ["data"] and errors["data"][0].startswith("reason: "), errors
    assert not CallbackRequest.objects.exists()


def test_nested_paths_become_their_field_name():
    assert by_field_name({
        "keywords.0": ["Too long."], "keywords": ["Repeats."], "outcome.tickets.3.file_refs.0.path": ["Required."],
        "name": ["Blank."],
    }) == {
        "keywords": ["Item 0: Too long.", "Repeats."],
        "outcome": ["tickets: Item 3: file_refs: Item 0: path: Required."],
        "name": ["Blank."],
    }
