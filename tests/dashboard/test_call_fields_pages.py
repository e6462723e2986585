"""Settings → Call fields (members read, admins change, through the same services as /v1/call-fields; another
org's field is the 404 page) and the call page showing a call's fields with their quotes marked in the transcript."""

import re

import pytest

from knowledge.models import CallField
from knowledge.services import call_field_create, location_create
from tests.support.runtime import TRANSCRIPT, Runtime

pytestmark = pytest.mark.django_db


@pytest.fixture
def field(org):
    return call_field_create(org=org, name="pizza_count", label="Pizzas", type="number")


def served(org):
    return [f["name"] for f in Runtime(org).knowledge().json()["data"]["call_fields"]]


def test_an_admin_creates_an_enum_field_for_one_location_and_the_runtime_serves_it(admin_client, org):
    downtown = location_create(org=org, name="Downtown", address="a", timezone="UTC", phone_number="+14155550100")
    location_create(org=org, name="Uptown", address="a", timezone="UTC", phone_number="+14155550101")
    page = admin_client.get("/settings/call-fields/new/")
    assert page.status_code == 200 and "Uptown" in page.content.decode()
    response = admin_client.post("/settings/call-fields/new/", {
        "name": "crust", "label": "Crust", "description": "Which crust they want.", "type": "enum",
        "choices": "thin\n deep dish \n\n", "location_ids": [str(downtown.pk)]})
    assert response.status_code == 302, response.content.decode()[:3000]
    field = CallField.objects.get(organization=org)
    assert (field.choices, field.location_ids, field.required) == (["thin", "deep dish"], [downtown.pk], False)
    assert served(org) == ["crust"]
    listing = admin_client.get("/settings/call-fields/").content.decode()
    assert "Crust" in listing and "deep dish" in listing and "Downtown" in listing


def test_bad_input_and_a_taken_name_show_beside_the_field(admin_client, org, field):
    bad = admin_client.post("/settings/call-fields/new/", {"name": "Pizza Count", "label": "P", "type": "enum",
                                                           "choices": ""})
    assert bad.status_code == 200
    body = bad.content.decode()
    assert "Use 1 to 64 lowercase letters, digits and underscores, starting with a letter." in body
    taken = admin_client.post("/settings/call-fields/new/", {"name": "pizza_count", "label": "P", "type": "number"})
    assert taken.status_code == 200
    assert "A call field with this name already applies to one of these locations." in taken.content.decode()
    enum = admin_client.post("/settings/call-fields/new/", {"name": "crust", "label": "Crust", "type": "enum"})
    assert "An enum field needs 1 to 50 choices." in enum.content.decode()
    assert list(CallField.objects.filter(organization=org).values_list("name", flat=True)) == ["pizza_count"]


def test_an_admin_edits_and_deletes_a_field(admin_client, org, field):
    form = admin_client.get(f"/settings/call-fields/{field.pk}/edit/").content.decode()
    assert 'value="pizza_count"' in form
    response = admin_client.post(f"/settings/call-fields/{field.pk}/edit/", {
        "name": "pies", "label": "Pies", "type": "number", "choices": "ignored for a number", "required": "on"})
    assert response.status_code == 302
    field.refresh_from_db()
    assert (field.name, field.label, field.choices, field.required, field.location_ids) == (
        "pies", "Pies", [], True, None)
    assert admin_client.post(f"/settings/call-fields/{field.pk}/delete/").status_code == 302
    assert not CallField.objects.filter(pk=field.pk).exists()


def test_a_member_reads_and_may_not_change(member_client, field):
    assert "Pizzas" in member_client.get("/settings/call-fields/").content.decode()
    assert member_client.get("/settings/call-fields/new/").status_code == 403
    assert member_client.post(f"/settings/call-fields/{field.pk}/delete/").status_code == 403
    assert CallField.objects.filter(pk=field.pk).exists()


def test_another_orgs_field_is_the_404_page(admin_client, other_org):
    theirs = call_field_create(org=other_org, name="table", label="Table", type="number")
    assert admin_client.get(f"/settings/call-fields/{theirs.pk}/edit/").status_code == 404
    assert admin_client.post(f"/settings/call-fields/{theirs.pk}/delete/").status_code == 404
    assert CallField.objects.filter(pk=theirs.pk).exists()


def test_the_call_page_shows_each_field_and_marks_its_quote(admin_client, org, field):
    call_field_create(org=org, name="wants_delivery", label="Delivery", type="boolean")
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, outcome="question", fields={
        "pizza_count": {"value": 1, "evidence": "a large pepperoni pizza"},
        "wants_delivery": {"value": False, "evidence": "never said"}})
    assert response.status_code == 200
    body = admin_client.get(f"/calls/{runtime.call(call_id).pk}").content.decode()
    values = re.findall(r'<dd data-field="([a-z_]+)"><span data-testid="call-field-value">([^<]*)</span>', body)
    assert values == [("pizza_count", "1"), ("wants_delivery", "No")]
    assert re.findall(r'<mark title="Evidence for Pizzas" data-field="pizza_count" class="mark--field">([^<]*)</mark>',
                      body) == [TRANSCRIPT[1]["text"][9:32]]
    assert "No quote from the transcript backs it (unverified)." in body
    assert 'href="#turn-2">“a large pepperoni pizza”' in body


def test_the_quota_is_said_above_the_form(admin_client, org, field, settings):
    settings.QUOTA_CALL_FIELDS_PER_ORG = 1
    response = admin_client.post("/settings/call-fields/new/", {"name": "crust", "label": "Crust", "type": "string"})
    assert response.status_code == 200
    assert "the most it may have (QUOTA_CALL_FIELDS_PER_ORG = 1)" in response.content.decode()
    assert CallField.objects.filter(organization=org).count() == 1


@pytest.mark.parametrize(("kind", "extra", "value", "shown"), [
    ("string", {}, "Oakland", "Oakland"),
    ("number", {}, 2.5, "2.5"),
    ("boolean", {}, True, "Yes"),
    ("date", {}, "2026-11-21", "2026-11-21"),
    ("enum", {"choices": ["thin", "deep dish"]}, "deep dish", "deep dish"),
])
def test_each_types_value_is_shown_on_the_call_page(admin_client, org, kind, extra, value, shown):
    call_field_create(org=org, name="answer", label="The answer", type=kind, **extra)
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, outcome="question", fields={"answer": {"value": value}}).status_code == 200
    body = admin_client.get(f"/calls/{runtime.call(call_id).pk}").content.decode()
    assert re.findall(r'<dt>([^<]*)</dt>\s*<dd data-field="answer"><span data-testid="call-field-value">([^<]*)</span>',
                      body) == [("The answer", shown)]
