"""The dashboard's "Export CSV" buttons: each list's link carries the filters the page shows, and the download holds
exactly the page's rows (all of them, not a page), with the /v1 export's columns and times in the organization's
zone; refused filters are 400; members export too; another organization's rows never appear."""

import csv
import io
import re

import pytest

from orgs.models import Organization
from tests.factories import MembershipFactory
from tests.support.exports import HYPERLINK

pytestmark = pytest.mark.django_db


def _button(page: str, testid: str) -> str:
    [href] = re.findall(rf'href="([^"]+)" data-testid="{testid}"', page)
    return href.replace("&amp;", "&")


def _download(client, url: str) -> list[dict]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="')
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_the_calls_button_exports_the_calls_the_page_shows(member_client, org, rows):
    Organization.objects.filter(pk=org.pk).update(time_zone="America/Los_Angeles")
    response = member_client.get("/calls/", {"location": str(rows["annex"].pk)})
    shown = [str(call.pk) for call in response.context["calls"]]
    url = _button(response.content.decode(), "calls-export")
    assert url == f"/calls/export.csv?location={rows['annex'].pk}"
    exported = _download(member_client, url)
    assert [row["id"] for row in exported] == shown == [str(rows["message"].pk)]
    assert exported[0]["started_at"] == "2026-11-20T05:00:00.000-08:00"  # 13:00 UTC, in the organization's zone
    assert exported[0]["summary"] == "'" + HYPERLINK

    everything = _download(member_client, _button(member_client.get("/calls/").content.decode(), "calls-export"))
    assert len(everything) == 3 and "Rival" not in str(everything)


def test_the_contacts_button_exports_the_search(member_client, rows):
    response = member_client.get("/contacts/", {"q": "555 0999", "page": "1"})
    url = _button(response.content.decode(), "contacts-export")
    assert url == "/contacts/export.csv?q=555+0999"
    exported = _download(member_client, url)
    assert [row["id"] for row in exported] == [str(c.pk) for c in response.context["contacts"]]
    assert exported[0]["name"] == "'" + HYPERLINK
    assert len(_download(member_client, "/contacts/export.csv")) == len(member_client.get("/contacts/").context[
        "page"].object_list)


def test_the_bookings_button_exports_the_filtered_bookings(member_client, rows):
    page = member_client.get("/bookings/", {"status": "confirmed", "location": str(rows["main"].pk)})
    url = _button(page.content.decode(), "bookings-export")
    exported = _download(member_client, url)
    assert [row["id"] for row in exported] == [str(b.pk) for b in page.context["upcoming"]]
    # 10:00 UTC in the organization's zone (New York: its first location's)
    assert len(exported) == 1 and exported[0]["start_at"] == "2030-01-07T05:00:00.000-05:00"
    assert _download(member_client, "/bookings/export.csv?status=canceled") == []


def test_each_inbox_section_exports_what_it_lists(member_client, admin_client, rows):
    page = member_client.get("/inbox/", {"show": "all"})
    for section in page.context["sections"]:
        if not section["count"]:
            continue
        url = _button(page.content.decode(), f"export-{section['anchor']}")
        assert url == f"/inbox/{section['kind']}/export.csv?show=all"
        assert [row["id"] for row in _download(member_client, url)] == [str(i.pk) for i in section["items"]]
    callback = next(s for s in page.context["sections"] if s["kind"] == "callback")["items"][0]
    admin_client.post(f"/inbox/callback/{callback.pk}/handled")
    assert _download(member_client, "/inbox/callback/export.csv?show=open") == []
    [handled] = _download(member_client, "/inbox/callback/export.csv?show=handled")
    assert handled["handled"] == "true" and '"type":"user"' in handled["handled_by"]
    assert member_client.get("/inbox/meeting/export.csv").status_code == 404


@pytest.mark.parametrize("url", ["/calls/export.csv?since=yesterday", "/bookings/export.csv?status=lost",
                                 "/contacts/export.csv?q=" + "x" * 201])
def test_refused_filters_are_400_and_export_nothing(member_client, rows, url):
    response = member_client.get(url)
    assert response.status_code == 400
    assert response.content.decode().startswith("Fix the filters on the ")


def test_signed_out_visitors_are_sent_to_sign_in(client):
    for url in ("/calls/export.csv", "/contacts/export.csv", "/bookings/export.csv", "/inbox/message/export.csv"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_location_manager_exports_only_their_locations_rows(client, org, rows):
    manager = MembershipFactory(organization=org, role="location_manager", location_ids=[rows["annex"].pk]).user
    client.force_login(manager)
    calls = _download(client, "/calls/export.csv")
    assert [row["id"] for row in calls] == [str(rows["message"].pk)]
    assert [row["id"] for row in calls] == [str(c.pk) for c in client.get("/calls/").context["calls"]]
    assert _download(client, "/bookings/export.csv") == []  # the booking is at the main location
    messages = _download(client, "/inbox/message/export.csv?show=all")
    assert {row["location_id"] for row in messages} == {str(rows["annex"].pk)}
