"""The rows and values the calls services share: the call under its lock, org-owned ids named in a request body,
a returning caller's contact, and phone numbers from the runtime in E.164."""

from contacts.models import Contact
from orgs.models import Organization
from orgs.phones import normalize_phone
from orgs.tenancy import get_for_org

from ..errors import CallNotFound
from ..models import Call


def org_row(model, org: Organization, pk):
    """An org-owned row named in a request body (None when the body names none), or NotFound: another org's id
    looks exactly like a missing one."""
    if pk is None:
        return None
    return get_for_org(model, org, pk)


def locked_call(*, org: Organization, runtime_call_id: str) -> Call:
    """The call under `select_for_update`; the caller holds a transaction. Serializes every runtime write per call."""
    call = Call.objects.select_for_update().filter(organization=org, runtime_call_id=runtime_call_id).first()
    if call is None:
        raise CallNotFound("call not found")
    return call


def existing_contact(org: Organization, phone_number: str | None) -> Contact | None:
    """The org's contact with this number, if the caller is already one (a withheld number never is)."""
    if not phone_number:
        return None
    return Contact.objects.for_org(org).filter(phone_number=phone_number).first()


def runtime_phone(org: Organization, raw: str | None, field: str) -> str | None:
    """A phone number from the runtime in E.164 (the org's region for national numbers); None stays None."""
    if raw is None or raw == "":
        return None
    return normalize_phone(raw, region=org.default_phone_region, field=field)
