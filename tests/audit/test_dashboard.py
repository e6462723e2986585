"""Settings → Audit log: admins only, the org's own entries, filters, changes shown before → after, and a CSV
export that streams."""

import csv
import io

import pytest
from django.http import StreamingHttpResponse

from audit.models import AuditEvent
from orgs.services import organization_update

pytestmark = pytest.mark.django_db

URL = "/settings/audit-log/"


def test_members_and_anonymous_visitors_are_kept_out(member_client, client):
    assert member_client.get(URL).status_code == 403
    assert member_client.get(f"{URL}export.csv").status_code == 403
    assert client.get(URL).status_code == 302


def test_admins_see_their_orgs_entries_with_before_and_after(admin_client, admin, org, other_org, outsider):
    organization_update(org=org, by=admin, name="Acme & Co")
    organization_update(org=other_org, by=outsider, name="Secret Rival Name")
    page = admin_client.get(URL).content.decode()
    assert "organization.updated" in page
    assert "Acme Pizza</span> → <span class=\"changes__after\">Acme &amp; Co" in page
    assert "Secret Rival Name" not in page
    assert 'href="/settings/audit-log/"' in admin_client.get("/settings/").content.decode()  # in the navigation


def test_filters_narrow_the_list_and_bad_ones_are_shown_inline(admin_client, admin, org):
    organization_update(org=org, by=admin, name="Filtered Name")
    def actions(**params):
        return [row["entry"].action for row in admin_client.get(URL, params).context["rows"]]

    assert actions(action="api_key.") == [] and actions(action="organization.") == ["organization.updated"]
    assert actions(target=str(org.pk)) == ["organization.updated"]
    assert actions(actor="nobody") == []
    bad = admin_client.get(URL, {"action": "drop.table", "since": "yesterday"})
    assert bad.status_code == 200
    assert "Fix the filters above" in bad.content.decode()
    assert admin_client.get(f"{URL}export.csv", {"since": "yesterday"}).status_code == 400


def test_older_entries_page_by_cursor(admin_client, admin, org):
    for i in range(55):
        organization_update(org=org, by=admin, name=f"Name {i:02d}")
    first = admin_client.get(URL)
    assert first.context["next_cursor"]
    assert len(first.context["rows"]) == 50
    second = admin_client.get(URL, {"cursor": first.context["next_cursor"]})
    ids = [row["entry"].pk for row in first.context["rows"] + second.context["rows"]]
    assert ids == list(AuditEvent.objects.for_org(org).order_by("-occurred_at", "-id").values_list("pk", flat=True))
    assert admin_client.get(URL, {"cursor": "edited"}).status_code == 200  # a bad cursor starts from the newest


def test_the_csv_export_streams_the_filtered_entries(admin_client, admin, org, other_org, outsider):
    organization_update(org=org, by=admin, name="=HYPERLINK(\"http://evil\")")
    organization_update(org=other_org, by=outsider, name="Not ours")
    response = admin_client.get(f"{URL}export.csv", {"action": "organization.updated"})
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="audit-log-')
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["id", "occurred_at", "action"]
    [entry] = rows[1:]
    assert entry[2:6] == ["organization.updated", "system", "", "system"]  # a service called outside a request
    assert entry[8].startswith("'=HYPERLINK")  # a spreadsheet shows it as text, never runs it
    assert "Not ours" not in "".join(entry)
