"""/v1/alert-rules and /v1/alerts: shapes, bad input (400/409 naming the field, nothing written), the quota, and the
location scope of rules and alerts."""

import json

import pytest

from alerts.evaluation import evaluate
from alerts.models import Alert, AlertRule
from alerts.services import alert_rule_create
from audit.models import AuditEvent
from knowledge.services import location_create
from tests.factories import make_key
from tests.support.alerts import MINUTE, T0, call_at

pytestmark = pytest.mark.django_db

RULE = {"name": "Quiet line", "metric": "calls", "comparator": "lt", "threshold": 2, "window_minutes": 60}


def client_for(key_plaintext):
    from rest_framework.test import APIClient  # noqa: PLC0415 - tests only

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key_plaintext}")
    return client


def test_create_read_update_delete_a_rule(api, org):
    response = api.post("/v1/alert-rules", RULE, format="json")
    assert response.status_code == 201, response.json()
    data = response.json()["data"]
    rule_id = data.pop("id")
    assert data.pop("created_at") and data.pop("updated_at")
    assert data == {"name": "Quiet line", "metric": "calls", "location_ids": None, "comparator": "lt",
                    "threshold": 2.0, "window_minutes": 60, "min_calls": 1, "cooldown_minutes": 60,
                    "channels": ["email"], "only_during_open_hours": False, "enabled": True}
    detail = api.get(f"/v1/alert-rules/{rule_id}").json()["data"]
    assert detail["name"] == "Quiet line"
    listed = api.get("/v1/alert-rules").json()
    assert listed["data"] == [detail] and listed["has_more"] is False
    patched = api.patch(f"/v1/alert-rules/{rule_id}", {"threshold": 5, "channels": ["email", "webhook"]},
                        format="json")
    assert patched.status_code == 200
    assert (patched.json()["data"]["threshold"], patched.json()["data"]["channels"]) == (5.0, ["email", "webhook"])
    assert api.delete(f"/v1/alert-rules/{rule_id}").status_code == 204
    assert not AlertRule.objects.exists()
    assert list(AuditEvent.objects.filter(action__startswith="alert_rule.").order_by("occurred_at")
                .values_list("action", flat=True)) == ["alert_rule.created", "alert_rule.updated", "alert_rule.deleted"]


def test_line_silent_takes_its_fixed_condition(api):
    body = {"name": "Watchdog", "metric": "line_silent", "window_minutes": 60, "min_calls": 2}
    data = api.post("/v1/alert-rules", body, format="json").json()["data"]
    assert (data["comparator"], data["threshold"], data["min_calls"]) == ("lt", 1.0, 2)
    response = api.post("/v1/alert-rules", {**body, "name": "Other", "comparator": "gt"}, format="json")
    assert response.status_code == 400
    assert list(response.json()["details"]["fieldErrors"]) == ["comparator"]


@pytest.mark.parametrize(("changes", "field"), [
    ({"metric": "bogus"}, "metric"),
    ({"comparator": "eq"}, "comparator"),
    ({"window_minutes": 14}, "window_minutes"),
    ({"window_minutes": 1441}, "window_minutes"),
    ({"window_minutes": 60.5}, "window_minutes"),
    ({"threshold": -1}, "threshold"),
    ({"metric": "webhook_failure_rate", "threshold": 2}, "threshold"),
    ({"channels": ["sms"]}, "channels"),
    ({"cooldown_minutes": -5}, "cooldown_minutes"),
    ({"location_ids": []}, "location_ids"),
    ({"location_ids": ["not-a-uuid"]}, "location_ids"),
])
def test_bad_input_is_400_naming_the_field_and_writes_nothing(api, changes, field):
    response = api.post("/v1/alert-rules", {**RULE, **changes}, format="json")
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["error"] == "Validation failed"
    assert list(body["details"]["fieldErrors"]) == [field]
    assert not AlertRule.objects.exists()


def test_missing_required_fields_are_named(api):
    response = api.post("/v1/alert-rules", {"name": "x"}, format="json")
    assert response.status_code == 400
    assert set(response.json()["details"]["fieldErrors"]) == {"metric", "window_minutes"}
    response = api.post("/v1/alert-rules", {"name": "x", "metric": "calls", "window_minutes": 60}, format="json")
    assert (response.status_code, response.json()) == (400, {"error": "Validation failed", "details": {
        "formErrors": [], "fieldErrors": {"comparator": ["This field is required."],
                                          "threshold": ["This field is required."]}}})


def test_a_location_of_another_organization_is_400_naming_location_ids(api, other_org):
    theirs = location_create(org=other_org, name="Theirs", timezone="UTC")
    response = api.post("/v1/alert-rules", {**RULE, "location_ids": [str(theirs.pk)]}, format="json")
    assert response.status_code == 400
    assert response.json() == {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": {
        "location_ids": [f"Not a location of this organization: {theirs.pk}."]}}}
    assert not AlertRule.objects.exists()


def test_webhook_failure_rate_is_the_organizations(api, org):
    place = location_create(org=org, name="Main", timezone="UTC")
    response = api.post("/v1/alert-rules", {**RULE, "metric": "webhook_failure_rate", "threshold": 0.2,
                                            "location_ids": [str(place.pk)]}, format="json")
    assert response.status_code == 400
    assert list(response.json()["details"]["fieldErrors"]) == ["location_ids"]


def test_a_duplicate_name_is_409_name(api):
    assert api.post("/v1/alert-rules", RULE, format="json").status_code == 201
    response = api.post("/v1/alert-rules", RULE, format="json")
    assert (response.status_code, response.json()) == (409, {"error": "conflict", "details": {"field": "name"}})
    assert AlertRule.objects.count() == 1


def test_the_51st_rule_is_409_alert_rules(api, org, settings):
    assert settings.QUOTA_ALERT_RULES_PER_ORG == 50
    for n in range(50):
        alert_rule_create(org=org, name=f"Rule {n}", metric="calls", comparator="gt", threshold=1,
                          window_minutes=15)
    response = api.post("/v1/alert-rules", RULE, format="json")
    assert (response.status_code, response.json()) == (409, {"error": "conflict",
                                                             "details": {"field": "alert_rules"}})
    assert AlertRule.objects.count() == 50


def test_a_key_limited_to_a_location_sees_and_writes_its_locations_rules_and_alerts_only(org, admin):
    main = location_create(org=org, name="Main", timezone="UTC")
    harbor = location_create(org=org, name="Harbor", timezone="UTC")
    mine = alert_rule_create(org=org, name="Main busy", metric="calls", comparator="gt", threshold=0,
                             window_minutes=15, location_ids=[main.pk], channels=[])
    theirs = alert_rule_create(org=org, name="Harbor busy", metric="calls", comparator="gt", threshold=0,
                               window_minutes=15, location_ids=[harbor.pk], channels=[])
    whole = alert_rule_create(org=org, name="Org busy", metric="calls", comparator="gt", threshold=0,
                              window_minutes=15, channels=[])
    for place in (main, harbor):
        call_at(org, T0 - MINUTE, location=place)
    assert evaluate(now=T0)["fired"] == 3
    client = client_for(make_key(org, admin=admin, location_ids=[main.pk])[1])

    assert [r["id"] for r in client.get("/v1/alert-rules").json()["data"]] == [str(mine.pk)]
    for rule in (theirs, whole):
        assert client.get(f"/v1/alert-rules/{rule.pk}").status_code == 404
        assert client.patch(f"/v1/alert-rules/{rule.pk}", {"enabled": False}, format="json").status_code == 404
        assert client.delete(f"/v1/alert-rules/{rule.pk}").status_code == 404
    alerts = client.get("/v1/alerts").json()["data"]
    main_alert = Alert.objects.get(rule=mine)
    assert [a["id"] for a in alerts] == [str(main_alert.pk)]
    for alert in Alert.objects.exclude(rule=mine):
        assert client.get(f"/v1/alerts/{alert.pk}").status_code == 404
        assert client.post(f"/v1/alerts/{alert.pk}/acknowledge").status_code == 404

    response = client.post("/v1/alert-rules", {**RULE, "location_ids": [str(harbor.pk)]}, format="json")
    assert response.status_code == 400
    assert list(response.json()["details"]["fieldErrors"]) == ["location_ids"]
    response = client.post("/v1/alert-rules", RULE, format="json")  # the whole organization
    assert response.status_code == 403
    assert response.json()["error"] == "forbidden"
    response = client.patch(f"/v1/alert-rules/{mine.pk}", {"location_ids": None}, format="json")
    assert response.status_code == 403
    assert AlertRule.objects.count() == 3
    assert AlertRule.objects.get(pk=mine.pk).location_ids == [main.pk]
    response = client.post("/v1/alert-rules", {**RULE, "location_ids": [str(main.pk)]}, format="json")
    assert response.status_code == 201


def test_alerts_list_read_and_acknowledge(api, org, write_key):
    rule = alert_rule_create(org=org, name="Quiet", metric="calls", comparator="lt", threshold=1, window_minutes=15,
                             channels=[])
    evaluate(now=T0)
    alert = Alert.objects.get()
    body = api.get(f"/v1/alerts/{alert.pk}").json()["data"]
    assert body == {"id": str(alert.pk), "rule_id": str(rule.pk), "location_id": None, "metric": "calls",
                    "value": 0.0, "threshold": 1.0, "window_minutes": 15, "triggered_at": "2026-11-25T15:00:00.000Z",
                    "acknowledged_at": None, "acknowledged_by": None, "resolved_at": None}
    assert api.get("/v1/alerts").json()["data"] == [body]
    # Number for number as written: the list's items are built in SQL, and 0 == 0.0 once parsed.
    def written(response):
        return json.loads(response.content, parse_float=lambda text: ("float", text))["data"]

    detail = written(api.get(f"/v1/alerts/{alert.pk}"))
    assert (detail["value"], detail["threshold"]) == (("float", "0.0"), ("float", "1.0"))
    assert written(api.get("/v1/alerts")) == [detail]
    assert api.get("/v1/alerts?status=resolved").json()["data"] == []
    assert api.get("/v1/alerts?status=open").json()["data"] == [body]
    assert api.get("/v1/alerts?status=bogus").status_code == 400
    acknowledged = api.post(f"/v1/alerts/{alert.pk}/acknowledge")
    assert acknowledged.status_code == 200
    data = acknowledged.json()["data"]
    assert data["acknowledged_by"] == f"API key {write_key[0].name} ({write_key[0].key_prefix}...)"
    assert data["acknowledged_at"] is not None
    again = api.post(f"/v1/alerts/{alert.pk}/acknowledge").json()["data"]
    assert again == data  # once: the second answers the first unchanged
    assert api.get("/v1/alerts?status=acknowledged").json()["data"] == [data]
    assert AuditEvent.objects.filter(action="alert.acknowledged").count() == 1


def test_deleting_a_rule_resolves_its_open_alert_and_keeps_it(api, org):
    rule = alert_rule_create(org=org, name="Quiet", metric="calls", comparator="lt", threshold=1, window_minutes=15,
                             channels=[])
    evaluate(now=T0)
    assert api.delete(f"/v1/alert-rules/{rule.pk}").status_code == 204
    alert = Alert.objects.get()
    assert alert.rule_id is None and alert.resolved_at is not None


def test_a_location_an_alert_rule_watches_cannot_be_deleted(org):
    from core.errors import Conflict  # noqa: PLC0415
    from knowledge.services import location_delete  # noqa: PLC0415

    main = location_create(org=org, name="Main", timezone="UTC")
    alert_rule_create(org=org, name="Main busy", metric="calls", comparator="gt", threshold=0, window_minutes=15,
                      location_ids=[main.pk])
    with pytest.raises(Conflict) as refused:
        location_delete(location=main)
    assert refused.value.field == "alert_rules"
