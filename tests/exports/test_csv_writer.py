"""core.csvexport: every cell safe to open in a spreadsheet, values written one way, and rows read in pages, each in a
short transaction of its own, none left open while the client reads."""

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal
from uuid import UUID
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.db.models import F, Value
from django.db.models.functions import Concat

from contacts.models import Contact
from core.csvexport import Column, cell, csv_lines, csv_response


@pytest.mark.parametrize("text", ['=HYPERLINK("http://evil.example","x")', "+1+2", "-2+3", "@SUM(A1)",
                                  "\t=1", "\r=1"])
def test_text_that_a_spreadsheet_would_run_is_written_as_text(text):
    assert cell(text) == "'" + text


@pytest.mark.parametrize("text", ["\n=1+2", "\nplain", " =1+2", "  +1", "\u3000=1", "\xa0@SUM(A1)",
                                  "\uff1dHYPERLINK(\"http://evil.example\")", "\uff0b1", "\uff0d2", "\uff20SUM(A1)",
                                  " \uff1d1"])
def test_line_feeds_leading_whitespace_and_full_width_signs_are_written_as_text(text):
    """Issue 35 item 11: spreadsheets skip leading whitespace, read the full-width signs as the ASCII ones, and
    a line feed first starts a formula on the cell's next line."""
    assert cell(text) == "'" + text
    assert cell(" plain") == " plain" and cell("a\uff1db") == "a\uff1db"


def test_values_are_written_one_way():
    assert cell(None) == ""
    assert cell(True) == "true" and cell(False) == "false"
    assert cell(-3) == "-3" and cell(2.5) == "2.5" and cell(Decimal("-1.10")) == "-1.10"  # numbers stay numbers
    when = datetime(2026, 3, 8, 10, 30, 0, 123456, tzinfo=UTC)
    assert cell(when) == "2026-03-08T10:30:00.123+00:00"
    assert cell(when, ZoneInfo("America/Los_Angeles")) == "2026-03-08T03:30:00.123-07:00"
    assert cell(UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    assert cell(["a", "b"]) == '["a","b"]' and cell({"k": "é"}) == '{"k":"é"}'
    assert cell("plain") == "plain" and cell("a=b") == "a=b"


def _contacts(org, n):
    Contact.objects.bulk_create(
        Contact(organization=org, phone_number=f"+1415555{i:04d}", name=f"Name {i}") for i in range(n)
    )
    return Contact.objects.for_org(org).order_by("phone_number")


def test_rows_come_in_order_under_a_header_with_expressions_and_renders(org):
    rows = _contacts(org, 3)
    columns = [Column("phone_number"), Column("label", source=Concat(F("name"), Value("!"))),
               Column("upper", source="name", render=str.upper)]
    text = "".join(csv_lines(rows, columns, chunk_size=2))
    assert list(csv.reader(io.StringIO(text))) == [
        ["phone_number", "label", "upper"],
        ["'+14155550000", "Name 0!", "NAME 0"], ["'+14155550001", "Name 1!", "NAME 1"],
        ["'+14155550002", "Name 2!", "NAME 2"],
    ]


@pytest.mark.parametrize("zone", [UTC, ZoneInfo("America/Los_Angeles"), ZoneInfo("Asia/Kolkata")])
def test_timestamp_columns_are_written_as_cell_writes_them(org, zone):
    """A timestamp column in the export's zone, DST included, and the transaction's reads stay right after it."""
    rows = _contacts(org, 2)
    Contact.objects.filter(pk=rows[0].pk).update(created_at=datetime(2026, 3, 8, 9, 59, 59, 999999, tzinfo=UTC))
    Contact.objects.filter(pk=rows[1].pk).update(created_at=datetime(2026, 3, 8, 10, 0, 0, 1000, tzinfo=UTC))
    lines = "".join(csv_lines(rows, [Column("created_at")], tz=zone)).split("\r\n")[1:-1]
    assert lines == [cell(contact.created_at, zone) for contact in rows]
    if zone == ZoneInfo("America/Los_Angeles"):
        assert lines == ["2026-03-08T01:59:59.999-08:00", "2026-03-08T03:00:00.001-07:00"]


def test_an_empty_export_is_its_header(org):
    assert "".join(csv_lines(Contact.objects.for_org(org), [Column("name")])) == "name\r\n"


def test_the_header_and_first_row_leave_first_then_whole_chunks(org):
    chunks = list(csv_lines(_contacts(org, 7), [Column("name")], chunk_size=3))
    assert [chunk.count("\r\n") for chunk in chunks] == [2, 3, 3]


@pytest.mark.django_db(transaction=True)
def test_no_transaction_stays_open_between_chunks(org):
    """In autocommit (as a request runs), each page is read in a transaction of its own that ends before its rows
    leave: a download the client reads slowly holds none (tests/exports/test_export_pages.py asks PostgreSQL)."""
    lines = csv_lines(_contacts(org, 5), [Column("name")], chunk_size=2)
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        jit = cursor.fetchone()[0]
    for _ in lines:
        assert not connection.in_atomic_block
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_cursors")
            assert cursor.fetchone()[0] == 0  # no server-side cursor left between chunks
            cursor.execute("SHOW jit")
            assert cursor.fetchone()[0] == jit  # SET LOCAL ended with its page's transaction


@pytest.mark.django_db(transaction=True)
def test_a_client_gone_mid_download_leaves_no_transaction(org):
    response = csv_response(_contacts(org, 5), [Column("name")], org=org, filename="x.csv")
    next(iter(response.streaming_content))
    assert not connection.in_atomic_block
    response.close()
    assert not connection.in_atomic_block


def test_the_query_runs_before_the_response_starts(org):
    """A query that fails raises in the view (an error answer), never as a 200 cut short."""
    broken = Contact.objects.for_org(org).extra(where=["1/0 = 1"])  # noqa: S610 - constant SQL
    with pytest.raises(Exception, match="division by zero"):
        csv_response(broken, [Column("name")], org=org, filename="x.csv")
