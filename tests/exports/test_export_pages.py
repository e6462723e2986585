"""Exports read in keyset pages (core/csvexport.py): while a download is partly read, its connection holds no
transaction and no snapshot (an open snapshot keeps PostgreSQL from pruning any table of the database, so one
organization's long download would slow every organization's webhook claims); and across page boundaries, ties on
the time field included, every kind's download is still its list row for row."""

import csv
import io
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse

from audit.models import AuditEvent
from calls.models import Booking, Call, CallbackRequest, Escalation, Message, Order
from contacts.models import Contact
from core.csvexport import Column, csv_lines, keyset
from knowledge.models import EscalationRule
from knowledge.services import calendar_create
from tests.support.database import connect
from tests.support.exports import KINDS, as_cells, exported, listed
from tests.support.runtime import T0, Runtime, iso

# Each kind's rows and the field its list orders by (newest first, then id).
ORDERED_BY = {"calls": (Call, "started_at"), "contacts": (Contact, "created_at"), "bookings": (Booking, "start_at"),
              "orders": (Order, "placed_at"), "callbacks": (CallbackRequest, "created_at"),
              "messages": (Message, "created_at"), "escalations": (Escalation, "created_at")}


def _backend(pid: int) -> tuple[str, object, object]:
    """The state, backend_xmin and xact_start of the backend `pid`, seen from a connection of our own (built from
    Django's settings)."""
    with connect() as other:
        return other.execute("SELECT state, backend_xmin, xact_start FROM pg_stat_activity WHERE pid = %s",
                             [pid]).fetchone()


def _calls(org, n: int) -> None:
    runtime = Runtime(org)
    for i in range(n):
        runtime.start(started_at=T0 + timedelta(minutes=i), from_number=f"+1415555{2000 + i:04d}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["api", "dashboard"])
def test_a_partly_read_export_holds_no_transaction_nor_snapshot(org, read_api, member_client, settings, where):
    settings.EXPORT_CHUNK_SIZE = 2
    _calls(org, 7)
    client, url = (read_api, "/v1/exports/calls.csv") if where == "api" else (member_client,
                                                                              reverse("dashboard:calls-export"))
    response = client.get(url)
    assert response.status_code == 200
    try:
        chunks = iter(response.streaming_content)
        next(chunks), next(chunks)  # the header and first call, then the next page: more to come
        with connection.cursor() as cursor:  # the test client's requests run on this test's connection
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        assert _backend(pid) == ("idle", None, None)  # not "idle in transaction", no backend_xmin
        assert not connection.in_atomic_block
        rest = b"".join(chunks)
    finally:
        response.close()
    assert rest.count(b"\r\n") == 4  # the download went on from where it stood


@pytest.mark.django_db(transaction=True)
def test_each_page_is_its_own_transaction_with_jit_off(org):
    """jit is off for each page's query (SET LOCAL, in the page's transaction), and the session's own is kept."""
    _calls(org, 5)
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        jit = cursor.fetchone()[0]
    sql = []

    def record(execute, statement, params, many, context):
        sql.append(statement)
        return execute(statement, params, many, context)

    with connection.execute_wrapper(record):  # a page's server-side cursor included (CaptureQueriesContext misses it)
        lines = csv_lines(Call.objects.for_org(org).order_by("-started_at", "-pk"), [Column("id")], chunk_size=2)
        next(lines)
        assert not connection.in_atomic_block
        rest = list(lines)
    selects = [i for i, statement in enumerate(sql) if statement.startswith("SELECT")]
    assert len(selects) == 4  # pages of 1 row (the first byte), then 2, 2, and none left
    assert all(sql[i - 1] == "SET LOCAL jit = off" for i in selects)
    assert "".join(rest).count("\r\n") == 4
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone()[0] == jit


@pytest.fixture
def many(org, rows):
    """`rows` plus three more calls, each with a booking (on a calendar of its own), a callback, an escalation, a
    message and an order; then the three newest rows of each kind share the newest one's time: ties on the time
    field that pages of 1 and 2 rows split."""
    runtime = Runtime(org)
    rule = EscalationRule.objects.get(organization=org)
    for i in range(3):
        call_id, _ = runtime.start(started_at=T0 + timedelta(hours=3 + i), from_number=f"+1415555{3000 + i:04d}")
        calendar = calendar_create(org=org, name=f"Room {i}", timezone_name="UTC", location=rows["main"],
                                   weekly_hours=[{"day": "mon", "start": "00:00", "end": "24:00"}])
        for type_, data in [
            ("callback_requested", {"requested_window": "evening", "reason": f"Call {i}",
                                    "callback_number": f"+1415555{3100 + i:04d}"}),
            ("escalation_triggered", {"rule_id": str(rule.pk), "triggered_by": "keyword", "context": f"esc {i}"}),
            ("appointment_booked", {"calendar_id": str(calendar.pk), "start_at": f"2030-01-07T1{i}:00:00Z",
                                    "end_at": f"2030-01-07T1{i}:30:00Z"}),
        ]:
            assert runtime.event(call_id, type=type_, label=type_, data=data).status_code == 201
        done = runtime.complete(call_id, messages=[{"message": f"Message {i}"}],
                                ended_at=iso(T0 + timedelta(hours=3 + i, minutes=2)))
        assert done.status_code in (200, 201), done.content
    for model, field in ORDERED_BY.values():
        newest = list(model.objects.filter(organization=org).order_by(f"-{field}", "-pk")[:3])
        assert len(newest) == 3
        when = getattr(newest[0], field)
        changes = {field: when, "end_at": when + timedelta(minutes=30)} if model is Booking else {field: when}
        model.objects.filter(pk__in=[row.pk for row in newest]).update(**changes)
    return rows


@pytest.mark.django_db
@pytest.mark.parametrize("chunk_size", [1, 2])
@pytest.mark.parametrize("kind", KINDS)
def test_across_pages_and_ties_each_export_is_its_list(read_api, many, settings, kind, chunk_size):
    settings.EXPORT_CHUNK_SIZE = chunk_size
    items = listed(read_api, kind)
    model, field = ORDERED_BY[kind]
    by, key = ("call_id", "call_id") if kind == "orders" else ("pk", "id")  # an order item names its call
    newest = model.objects.filter(**{f"{by}__in": [item[key] for item in items[:3]]})
    assert len(items) >= 4 and len({getattr(row, field) for row in newest}) == 1, "three tied rows, then others"
    header, *lines = exported(read_api, kind)
    assert header == list(items[0])
    assert lines == [as_cells(item) for item in items]


@pytest.mark.django_db
def test_across_pages_and_ties_the_audit_log_download_is_the_logs_order(org, admin_client, settings):
    settings.EXPORT_CHUNK_SIZE = 2
    tied = T0
    AuditEvent.objects.bulk_create(
        AuditEvent(id=uuid.uuid4(), organization_id=org.pk, occurred_at=tied if i < 5 else tied - timedelta(minutes=i),
                   action="fact.updated", actor_type="user", actor_label="x", target_type="fact",
                   target_label=f"fact {i}")
        for i in range(9)
    )
    expected = [str(pk) for pk in AuditEvent.objects.for_org(org).order_by("-occurred_at", "-id")
                .values_list("id", flat=True)]
    response = admin_client.get(reverse("dashboard:audit-log-export"))
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    assert [row["id"] for row in csv.DictReader(io.StringIO(text, newline=""))] == expected


@pytest.mark.django_db
def test_the_keyset_ends_in_a_unique_column(org):
    contacts = Contact.objects.for_org(org)
    assert keyset(contacts.order_by("-created_at", "-id")) == [("created_at", True), ("id", True)]
    assert keyset(contacts.order_by("phone_number")) == [("phone_number", False), ("pk", False)]
    assert keyset(contacts.order_by("-pk", "name")) == [("pk", True)]  # nothing after a unique column counts
    assert keyset(Contact.objects.all())[-1][0] in ("pk", "id")
    with pytest.raises(ValueError, match="null"):
        keyset(contacts.order_by("name"))  # a NULL compares as nothing: no page could continue after it
    with pytest.raises(ValueError, match="organization_id"):
        keyset(contacts.order_by("organization"))  # Django would order by the organization's own ordering


@pytest.mark.django_db
@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_an_order_of_mixed_directions_pages_through_ties(org, chunk_size):
    """Newest first, then by phone number upwards: the expanded form of "after" (no row comparison fits it)."""
    for i in range(8):  # created_at is set on insert (auto_now_add): tied afterwards, three by three
        contact = Contact.objects.create(organization=org, phone_number=f"+1415555{i:04d}")
        Contact.objects.filter(pk=contact.pk).update(created_at=T0 - timedelta(minutes=i // 3))
    rows = Contact.objects.for_org(org).order_by("-created_at", "phone_number")
    assert keyset(rows) == [("created_at", True), ("phone_number", False), ("pk", False)]
    expected = ["phone_number"] + [f"'{phone}" for phone in rows.values_list("phone_number", flat=True)]
    assert "".join(csv_lines(rows, [Column("phone_number")], chunk_size=chunk_size)).split("\r\n")[:-1] == expected
    assert expected[1:4] == ["'+14155550000", "'+14155550001", "'+14155550002"]  # three tied, in phone order
