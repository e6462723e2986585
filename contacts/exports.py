"""The CSV columns of the contacts export (core/csvexport.py): the fields of `GET /v1/contacts`'s item, in order."""

from core.csvexport import Column

CONTACT_COLUMNS = [Column(name) for name in (
    "id", "phone_number", "name", "email", "notes", "source", "first_call_id", "created_at", "updated_at",
)]
