"""The dashboard's isolation matrix inside one organization: a location manager of L1 against the rows of L2
(docs/api.md#locations-and-scope). Every page that takes an id answers for an L2 row exactly as for a missing one
(the 404 page where they may look, the 403 page where only an admin may), nothing changes, and every list, count,
filter and search leaves L2 out. The pages are enumerated from the URLconf: a new page with an id is in the matrix
the day it is added (and fails here until the matrix knows which row its id names)."""

import uuid
from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, reverse
from django.utils import timezone

from calls.models import Call
from dashboard import urls as dashboard_urls
from knowledge.services import fact_create
from notifications.models import NotificationRecipient
from orgs.models import Invitation, Membership
from tests.factories import MembershipFactory, make_key
from tests.support.clients import logged_in
from tests.support.matrix import snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("media_in_tmp")]

# URL parameter -> the world's row it names (the inbox's `kind` picks the row of `item_id`).
ROWS = {
    "call_id": "call", "contact_id": "contact", "fact_id": "fact", "location_id": "location",
    "member_id": "team_member", "rule_id": "escalation_rule", "calendar_id": "calendar", "booking_id": "booking",
    "subscription_id": "subscription", "delivery_id": "delivery", "field_id": "call_field",
    "membership_id": "membership", "invitation_id": "invitation", "key_id": "api_key", "recipient_id": "recipient",
    "meeting_id": "meeting", "suppression_id": "suppression", "alert_id": "alert",
}
INBOX_KINDS = ("callback", "message", "escalation")
# Not org pages: e-mailed links, whose token is the authority (test_invitations.py, test_accounts.py).
PUBLIC = {"invitation-accept", "password-reset-confirm"}
# Writes with a body each page would accept for a row it may change.
BODIES = {
    "call-order-status": {"status": "canceled"},
    "contact-edit": {"name": "Renamed", "phone_number": "+14155550177"},
    "member-role": {"role": "member"},
}


def _patterns(patterns=dashboard_urls.urlpatterns, namespace="dashboard"):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry.url_patterns, entry.namespace or namespace)
        elif isinstance(entry, URLPattern) and any(p.endswith("_id") for p in entry.pattern.converters) and (
            entry.name not in PUBLIC
        ):
            yield f"{namespace}:{entry.name}", tuple(entry.pattern.converters)


OBJECT_PAGES = sorted(set(_patterns()))


def _cases():
    for name, params in OBJECT_PAGES:
        kinds = INBOX_KINDS if "kind" in params else (None,)
        for kind in kinds:
            for method in ("get", "post"):
                yield pytest.param(name, params, kind, method, id=f"{name}{'-' + kind if kind else ''}-{method}")


def _kwargs(params, kind, rows: dict | None) -> dict:
    kwargs = {}
    for param in params:
        if param == "kind":
            kwargs[param] = kind
        elif param == "item_id":
            kwargs[param] = rows[kind if kind != "callback" else "callback"].pk if rows else uuid.uuid4()
        elif param == "part":  # what of a call to delete (dashboard/pages/calls.py DELETIONS)
            kwargs[param] = "content"
        elif param == "membership_id":
            kwargs[param] = rows["membership"].pk if rows else 2_000_000_000
        else:
            kwargs[param] = rows[ROWS[param]].pk if rows else uuid.uuid4()
    return kwargs


@pytest.fixture
def rows(l2_world, org, admin):
    """The /v1 matrix's L2 rows, and the organization's own things a location manager never reaches."""
    return {
        **l2_world,
        "membership": Membership.objects.get(user=admin, organization=org),
        "api_key": make_key(org, admin=admin, name="Org key")[0],
        "recipient": NotificationRecipient.objects.create(organization=org, email="ops@example.com", messages=True),
        "invitation": Invitation.objects.create(
            organization=org, email="someone@example.com", nonce="n" * 32, token_digest=uuid.uuid4().hex * 2,
            sent_at=timezone.now(), expires_at=timezone.now() + timedelta(days=7)),
        "meeting": type("NoMeeting", (), {"pk": uuid.uuid4()})(),
    }


@pytest.fixture
def manager_client(org, l1):
    return logged_in(MembershipFactory(organization=org, role="location_manager", location_ids=[l1.id]).user)


def _uuids(rows: dict) -> dict:
    """The rows' ids that can be looked for in a page (a membership's is a small integer)."""
    return {key: str(row.pk) for key, row in rows.items() if isinstance(row.pk, uuid.UUID) or len(str(row.pk)) > 30}


def _answer(response) -> tuple:
    return response.status_code, [t.name for t in response.templates if t.name.startswith("dashboard/errors/")]


@pytest.mark.parametrize(("name", "params", "kind", "method"), list(_cases()))
def test_an_l2_row_is_answered_as_a_missing_one_and_nothing_changes(rows, manager_client, name, params, kind,
                                                                    method):
    body = BODIES.get(name.split(":")[1], {})
    hidden_path = reverse(name, kwargs=_kwargs(params, kind, rows))
    missing_path = reverse(name, kwargs=_kwargs(params, kind, None))
    before = snapshot()
    hidden = getattr(manager_client, method)(hidden_path, body)
    assert snapshot() == before
    missing = getattr(manager_client, method)(missing_path, body)
    assert _answer(hidden) == _answer(missing)
    assert hidden.status_code in (403, 404, 405)
    page = hidden.content.decode()
    assert [key for key, pk in _uuids(rows).items() if pk in page and pk not in hidden_path] == []


# The list pages, and for each whether the organization's admin sees some L2 row there (the control: the
# manager's empty answer is the scope, not an empty world).
LISTS = {
    "/": False, "/calls/": True, "/inbox/": True, "/inbox/?show=handled": False, "/bookings/": True,
    "/contacts/": True, "/knowledge/": True, "/knowledge/unanswered/": False, "/locations/": True, "/team/": True,
    "/settings/escalation-rules/": True, "/settings/calendars/": True, "/settings/call-fields/": True,
    "/settings/webhooks/": True, "/events/": True, "/settings/members/": True,
    "/contacts/?q=4155550177": True, "/events/?type=call.ended": True,
    "/calls/export.csv": True, "/contacts/export.csv": True, "/bookings/export.csv": True,
    **{f"/inbox/{kind}/export.csv": True for kind in INBOX_KINDS},
}


def _body(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


@pytest.mark.parametrize("path", list(LISTS))
def test_lists_searches_and_filters_leave_l2_out(rows, admin_client, manager_client, path):
    ids = _uuids(rows)
    response = manager_client.get(path)
    assert response.status_code == 200
    page = _body(response)
    assert [key for key, pk in ids.items() if pk in page] == []
    admin_page = _body(admin_client.get(path))
    assert bool([key for key, pk in ids.items() if pk in admin_page]) == LISTS[path]


def test_counts_leave_l2_out(rows, admin_client, manager_client):
    def counts(client):
        overview = client.get("/").context
        inbox = {section["kind"]: section["count"] for section in client.get("/inbox/").context["sections"]}
        calls = client.get("/calls/").context["page"].paginator.count
        return {"calls": calls, "chart": overview["chart"]["total"], **inbox}

    assert counts(manager_client) == {"calls": 0, "chart": 0, "callback": 0, "message": 0, "escalation": 0}
    assert counts(admin_client) == {"calls": 1, "chart": 1, "callback": 1, "message": 1, "escalation": 1}


def test_the_knowledge_pages_use_counts_leave_l2_out(rows, org, admin_client, manager_client):
    """Issue 35 item 5: "used in N calls" beside a fact every location shares counts only the calls the reader's
    scope holds, or it tells one location's manager another's call volume."""
    shared = fact_create(org=org, label="Parking", content="Free after 6 pm")
    Call.objects.filter(pk=rows["call"].pk).update(facts_used=[{"id": str(shared.pk), "label": shared.label}])

    def uses(client) -> dict:
        groups = client.get("/knowledge/").context["groups"]
        return {fact.label: fact.use_count for group in groups for fact in group["facts"]}

    assert uses(manager_client) == {"Parking": 0}
    assert uses(admin_client) == {"Parking": 1, "L2 hours": 0}
    page = manager_client.get("/knowledge/").content.decode()
    assert "used in 0 calls" in page and "used in 1 call" not in page


def test_filtering_the_calls_by_l2_is_a_form_error(rows, manager_client):
    response = manager_client.get(f"/calls/?location={rows['location'].pk}")
    assert response.status_code == 200
    assert "location" in response.context["form"].errors
    assert str(rows["call"].pk) not in response.content.decode()
