"""Knowledge base pages: facts listed by location; admins create, edit and delete; members read; another org's
fact is a 404. Every write bumps the knowledge version the agent runtime's ETag is made of."""

import uuid

import pytest
from django.conf import settings

from knowledge.models import Fact
from knowledge.services import fact_create, location_create
from orgs.models import Organization

pytestmark = pytest.mark.django_db


@pytest.fixture
def location(org):
    return location_create(org=org, name="Downtown", address="1 Main St", timezone="America/New_York",
                           phone_number="+14155550100")


@pytest.fixture
def fact(org, location):
    return fact_create(org=org, label="Opening hours", content="Mon-Fri 9-17", location=location)


def version(org) -> int:
    return Organization.objects.get(pk=org.pk).knowledge_version


def runtime_knowledge(client, org):
    return client.get(f"/internal/agent/v1/orgs/{org.pk}/knowledge",
                      HTTP_AUTHORIZATION=f"Bearer {settings.AGENT_RUNTIME_TOKEN}")


def test_anonymous_visitors_are_sent_to_log_in(client, fact):
    for path in ["/knowledge/", "/knowledge/new/", f"/knowledge/{fact.pk}/edit/", f"/knowledge/{fact.pk}/delete/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/?next=")


def test_facts_are_listed_by_location_and_the_page_says_changes_are_live(member_client, org, location, fact):
    fact_create(org=org, label="Parking", content="Free after 6pm")
    response = member_client.get("/knowledge/")
    body = response.content.decode()
    assert response.status_code == 200
    groups = response.context["groups"]
    assert [(g["title"], [f.label for f in g["facts"]]) for g in groups] == [
        ("Every location", ["Parking"]), ("Downtown", ["Opening hours"]),
    ]
    assert "served to the agent on its very next knowledge read" in body
    # Members read but see no write controls.
    assert "/knowledge/new/" not in body and f"/knowledge/{fact.pk}/edit/" not in body


def test_admins_see_write_controls(admin_client, fact):
    body = admin_client.get("/knowledge/").content.decode()
    for path in ["/knowledge/new/", f"/knowledge/{fact.pk}/edit/", f"/knowledge/{fact.pk}/delete/"]:
        assert path in body


def test_members_get_403_on_every_write_and_nothing_changes(member_client, org, fact):
    before = version(org)
    assert member_client.get("/knowledge/new/").status_code == 403
    assert member_client.post("/knowledge/new/", {"label": "X", "content": "Y"}).status_code == 403
    assert member_client.get(f"/knowledge/{fact.pk}/edit/").status_code == 403
    assert member_client.post(f"/knowledge/{fact.pk}/edit/", {"label": "X", "content": "Y"}).status_code == 403
    assert member_client.post(f"/knowledge/{fact.pk}/delete/").status_code == 403
    assert list(Fact.objects.values_list("label", flat=True)) == ["Opening hours"]
    assert version(org) == before


def test_another_orgs_fact_is_404_and_untouched(outsider_client, fact):
    for path in [f"/knowledge/{fact.pk}/edit/", f"/knowledge/{fact.pk}/delete/"]:
        hidden, missing = outsider_client.get(path), outsider_client.get(path.replace(str(fact.pk), str(uuid.uuid4())))
        assert hidden.status_code == missing.status_code == 404
    assert outsider_client.post(f"/knowledge/{fact.pk}/delete/").status_code == 404
    assert outsider_client.post(f"/knowledge/{fact.pk}/edit/", {"label": "Hacked", "content": "x"}).status_code == 404
    assert Fact.objects.get(pk=fact.pk).label == "Opening hours"
    assert "Opening hours" not in outsider_client.get("/knowledge/").content.decode()


def test_create_is_served_on_the_next_runtime_read(admin_client, client, org, location):
    etag = runtime_knowledge(client, org)["ETag"]
    response = admin_client.post("/knowledge/new/", {"label": "Delivery area", "content": "Within 5 miles",
                                                     "location": str(location.pk)}, follow=True)
    assert response.status_code == 200
    assert "The agent gets it on its very next knowledge read" in response.content.decode()
    fact = Fact.objects.get(label="Delivery area")
    assert fact.location_id == location.pk
    answer = runtime_knowledge(client, org)
    assert answer["ETag"] != etag
    assert {"label": "Delivery area", "content": "Within 5 miles"}.items() <= next(
        f for f in answer.json()["data"]["facts"] if f["label"] == "Delivery area"
    ).items()


def test_the_create_form_preselects_a_location_from_the_query(admin_client, location):
    response = admin_client.get(f"/knowledge/new/?location={location.pk}")
    assert response.context["form"]["location"].value() == str(location.pk)


def test_bad_input_and_duplicate_labels_are_refused_inline_without_writing(admin_client, org, fact, other_org):
    before = version(org)
    empty = admin_client.post("/knowledge/new/", {"label": "", "content": ""})
    assert empty.status_code == 200 and set(empty.context["form"].errors) == {"label", "content"}
    duplicate = admin_client.post("/knowledge/new/", {"label": " Opening hours ", "content": "Other"})
    assert duplicate.status_code == 200
    assert duplicate.context["form"].errors["label"] == ["A fact with this label already exists."]
    assert 'data-testid="error-label"' in duplicate.content.decode()
    foreign = location_create(org=other_org, name="Theirs", address="x", timezone="UTC", phone_number="+14155550101")
    wrong_location = admin_client.post("/knowledge/new/", {"label": "L", "content": "C", "location": str(foreign.pk)})
    assert wrong_location.status_code == 200 and wrong_location.context["form"].errors["location"]
    too_long = admin_client.post("/knowledge/new/", {"label": "L", "content": "x" * 10_001})
    assert too_long.status_code == 200 and too_long.context["form"].errors["content"]
    assert Fact.objects.count() == 1 and version(org) == before


def test_edit_and_delete(admin_client, org, fact):
    other = fact_create(org=org, label="Parking", content="Free")
    clash = admin_client.post(f"/knowledge/{other.pk}/edit/", {"label": "Opening hours", "content": "Free"})
    assert clash.status_code == 200 and clash.context["form"].errors["label"]
    assert Fact.objects.get(pk=other.pk).label == "Parking"

    before = version(org)
    saved = admin_client.post(f"/knowledge/{fact.pk}/edit/", {"label": "Opening hours", "content": "Mon-Sat 9-18",
                                                              "location": ""})
    assert saved.status_code == 302 and saved["Location"] == "/knowledge/"
    fact.refresh_from_db()
    assert (fact.content, fact.location_id) == ("Mon-Sat 9-18", None)
    assert version(org) == before + 1

    confirm = admin_client.get(f"/knowledge/{fact.pk}/delete/")
    assert confirm.status_code == 200 and "csrfmiddlewaretoken" in confirm.content.decode()
    assert Fact.objects.filter(pk=fact.pk).exists()  # GET never deletes
    deleted = admin_client.post(f"/knowledge/{fact.pk}/delete/")
    assert deleted.status_code == 302 and not Fact.objects.filter(pk=fact.pk).exists()
    assert version(org) == before + 2
