"""Writes on contacts. Each service is one transaction; phone numbers are stored in E.164.

Uniqueness of a phone number per org is the database's job (a unique constraint): services insert and turn
the IntegrityError into `Conflict("phone_number")`, so a race gives one row and 409s, never a duplicate or a 500.
These services emit no events: `contact.created` is emitted by the calls app, because only a call knows whether
it was real engagement.

A principal limited to locations (a key, a location manager) sees a contact only once it has a call at one of its
locations (docs/api.md#locations-and-scope), so a 409 for a number held by a contact it cannot see would tell it that
the organization knows that caller. Its create is answered as if the number were free instead (`contact_create`).
"""

import copy

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from audit import services as audit
from core.errors import Conflict, ValidationFailed
from core.validation import check_email, check_lengths, optional_text
from orgs.models import Organization
from orgs.phones import normalize_phone
from orgs.tenancy import ScopeForbidden, location_ids_of

from .models import Contact

# Per-field caps: docs/api.md#limits.
MAX_LENGTHS = {"phone_number": 32, "name": 200, "email": 254, "notes": 5000}
EDITABLE_FIELDS = ("phone_number", "name", "email", "notes")


def _email_or_none(email: str | None) -> str | None:
    """A caller's email as heard on a call is best-effort: an invalid one is dropped, not an error."""
    try:
        check_email(email)
    except ValidationFailed:
        return None
    return email


def _digits(e164: str) -> str:
    return "".join(ch for ch in e164 if ch.isdigit())


def _call_id(call):
    """A call object (anything with `pk`) or its id."""
    return getattr(call, "pk", call)


@transaction.atomic
def contact_create(
    *,
    org: Organization,
    phone_number: str,
    name: str | None = None,
    email: str | None = None,
    notes: str | None = None,
    source: str,
    first_call=None,
) -> Contact:
    """Creates a contact; the phone is normalized to E.164 in `org.default_phone_region`.

    Raises ValidationFailed (`fieldErrors.phone_number`) for a number that does not parse or is not valid, and
    Conflict("phone_number") when the org already has a contact with that number, also when two requests race.
    For `org` seen through a location scope, that contact may be one the scope cannot see: then the create is
    answered as if the number were free (`_create_within_scope`).
    """
    if source not in Contact.Source.values:
        raise ValidationFailed(field_errors={"source": [f"Source must be one of {', '.join(Contact.Source.values)}."]})
    values = {"phone_number": phone_number, "name": optional_text(name), "email": optional_text(email),
              "notes": optional_text(notes)}
    check_lengths(values, MAX_LENGTHS)
    check_email(values["email"])
    e164 = normalize_phone(phone_number, region=org.default_phone_region)
    contact = Contact(
        organization=org,
        phone_number=e164,
        phone_digits=_digits(e164),
        name=values["name"],
        email=values["email"],
        notes=values["notes"],
        source=source,
        first_call_id=_call_id(first_call),
    )
    if location_ids_of(org) is not None:
        return _create_within_scope(org, contact)
    _insert(contact)
    return contact


def _insert(contact: Contact) -> None:
    """Saves a new contact, or Conflict("phone_number") when its number is taken (also by a racing insert)."""
    try:
        # A savepoint, so the caller's transaction survives the IntegrityError and can render the 409.
        with transaction.atomic():
            contact.save(force_insert=True)
    except IntegrityError:
        raise Conflict("phone_number", "A contact with this phone number already exists.") from None


FILLABLE_FIELDS = ("name", "email", "notes")
# A number found, then gone before the insert (an erasure in between), is looked up again; this many times at most.
SCOPED_CREATE_ATTEMPTS = 3


def _create_within_scope(org: Organization, contact: Contact) -> Contact:
    """`contact` (unsaved) created by a principal limited to locations. A contact of that number which the scope
    sees is the usual 409. One it cannot see answers as a creation would: `contact` comes back with that contact's
    id and times of now, as the request gave it; the stored contact keeps every value it has and takes the
    request's name, e-mail and notes where it has none, and the trail records which fields it took (the names only:
    the trail holds no caller data, docs/privacy.md) with the principal as actor.

    Both paths make one locking read of the number first, so neither starts with a failed insert the other lacks.
    The row lock holds the contact until commit; a racing create of the same number makes the insert fail, and
    the read then finds it."""
    visible = Exists(Contact.objects.for_org(org).filter(pk=OuterRef("pk")))
    for _ in range(SCOPED_CREATE_ATTEMPTS):
        existing = (Contact.objects.filter(organization_id=org.pk, phone_number=contact.phone_number)
                    .annotate(visible=visible).select_for_update(of=("self",)).first())
        if existing is None:
            try:
                _insert(contact)
            except Conflict:
                continue  # created meanwhile: read it
            return contact
        if existing.visible:
            break
        return _fill_out_of_sight(org, existing, contact)
    raise Conflict("phone_number", "A contact with this phone number already exists.")


def _fill_out_of_sight(org: Organization, existing: Contact, asked: Contact) -> Contact:
    """`existing` (locked) takes `asked`'s values where it has none; `asked` comes back as the created contact."""
    filled = {field: getattr(asked, field) for field in FILLABLE_FIELDS
              if getattr(asked, field) is not None and not getattr(existing, field)}
    now = timezone.now()
    if filled:
        Contact.objects.filter(pk=existing.pk).update(**filled, updated_at=now)
    audit.record(org=org, action="contact.filled", target_type="contact", target_id=existing.pk,
                 target_label=f"contact {existing.pk}", changes={"filled": [[], sorted(filled)]})
    asked.pk, asked.created_at, asked.updated_at = existing.pk, now, now
    return asked


@transaction.atomic
def contact_update(*, contact: Contact, **changes) -> Contact:
    """Changes any of phone_number, name, email, notes, and returns the saved contact: a copy, so the caller's object
    keeps its values when the change is refused. A new phone is normalized and may clash (409).

    Within a location scope (the contact read through a limited key or member) the phone number is not changed:
    numbers are unique per organization, so a clash would tell the scope that a contact it cannot see holds one
    (docs/api.md#locations-and-scope). The same 403 whatever the number, so it tells nothing."""
    unknown = sorted(set(changes) - set(EDITABLE_FIELDS))
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(unknown)}"])
    for field in ("name", "email", "notes"):
        if field in changes:
            changes[field] = optional_text(changes[field])
    check_lengths(changes, MAX_LENGTHS)
    check_email(changes.get("email"))
    if "phone_number" in changes:
        e164 = normalize_phone(changes["phone_number"], region=contact.organization.default_phone_region)
        if e164 == contact.phone_number:
            del changes["phone_number"]
        else:
            scope = location_ids_of(contact.organization)
            if scope is not None:
                raise ScopeForbidden("a contact's phone number", scope)
            changes["phone_number"] = e164
            changes["phone_digits"] = _digits(e164)
    if not changes:
        return contact
    contact = copy.copy(contact)
    for field, value in changes.items():
        setattr(contact, field, value)
    try:
        with transaction.atomic():
            contact.save(update_fields=[*changes, "updated_at"])
    except IntegrityError:
        raise Conflict("phone_number", "A contact with this phone number already exists.") from None
    return contact


@transaction.atomic
def contact_get_or_create_for_caller(
    *, org: Organization, phone_number: str, name: str | None = None, email: str | None = None, call=None
) -> tuple[Contact, bool]:
    """The contact for an inbound caller: (contact, created). For the calls app; emits nothing.

    A new contact gets `source="inbound_call"` and `first_call_id` = the call's id. An existing one keeps its
    data, except that a missing name or email is filled in from this call (never overwritten). Race safe: when
    two calls from one new number finish at once, one creates and the other gets the same row with
    created=False. An unparseable number raises ValidationFailed (callers with a withheld number have no
    contact; don't call this for them).
    """
    e164 = normalize_phone(phone_number, region=org.default_phone_region)
    name, email = optional_text(name), _email_or_none(optional_text(email))
    existing = Contact.objects.for_org(org).filter(phone_number=e164).first()
    if existing is None:
        try:
            with transaction.atomic():
                contact = contact_create(
                    org=org, phone_number=e164, name=name, email=email, source=Contact.Source.INBOUND_CALL,
                    first_call=call,
                )
            return contact, True
        except Conflict:
            existing = Contact.objects.for_org(org).get(phone_number=e164)
    fill = {}
    if name and not existing.name and len(name) <= MAX_LENGTHS["name"]:
        fill["name"] = name
    if email and not existing.email and len(email) <= MAX_LENGTHS["email"]:
        fill["email"] = email
    if fill:
        # Only fills blanks, and only where they are still blank, so two racing calls never overwrite each other.
        for field, value in fill.items():
            Contact.objects.filter(pk=existing.pk, **{f"{field}__isnull": True}).update(
                **{field: value, "updated_at": timezone.now()}
            )
        existing.refresh_from_db()
    return existing, False
