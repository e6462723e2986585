"""An organization's redaction policy: which kinds of sensitive data are replaced in calls' text at ingest, and
whether a call's audio is kept when a card, government id or bank account number was heard on it.

Read by every ingest point (calls, meetings) through `policy_of`; changed by admins in the dashboard and by keys
with the write scope (never a key limited to locations: the policy is the whole organization's), audited as
`privacy.redaction_updated`. docs/privacy.md#redaction.
"""

from django.db import transaction

from audit import services as audit
from core.errors import ValidationFailed
from core.sensitive import DETECTOR_VERSION, KINDS, Policy

from .models import Organization
from .services import _keys_reread, require_admin
from .tenancy import ScopeForbidden, location_ids_of

FIELDS = ("kinds", "keep_recordings_with_sensitive_data")


def redaction_policy_data(org: Organization) -> dict:
    """`GET /v1/privacy/redaction`'s data: the kinds in the detector's order."""
    chosen = set(org.redaction_kinds or [])
    return {
        "kinds": [kind for kind in KINDS if kind in chosen],
        "keep_recordings_with_sensitive_data": org.keep_recordings_with_sensitive_data,
        "detector_version": DETECTOR_VERSION,
    }


def policy_of(org: Organization, *, published: frozenset[str] = frozenset()) -> Policy:
    """The detector's policy for this organization's calls; `published` are its own numbers (never redacted)."""
    return Policy(kinds=frozenset(org.redaction_kinds or []), region=org.default_phone_region or "US",
                  published=published)


def _clean(changes: dict) -> dict:
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(changes) - set(FIELDS))
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s) in object: {', '.join(map(repr, unknown))}"])
    cleaned = {}
    if "kinds" in changes:
        kinds = changes["kinds"]
        if not isinstance(kinds, list | tuple) or not all(isinstance(kind, str) for kind in kinds):
            errors["kinds"] = ["Expected a list of kinds."]
        elif wrong := sorted({kind for kind in kinds if kind not in KINDS}):
            errors["kinds"] = [f"Unknown kind(s): {', '.join(wrong)}. Allowed: {', '.join(KINDS)}."]
        else:
            cleaned["redaction_kinds"] = [kind for kind in KINDS if kind in set(kinds)]
    if "keep_recordings_with_sensitive_data" in changes:
        keep = changes["keep_recordings_with_sensitive_data"]
        if not isinstance(keep, bool):
            errors["keep_recordings_with_sensitive_data"] = ["Must be a boolean."]
        else:
            cleaned["keep_recordings_with_sensitive_data"] = keep
    if errors:
        raise ValidationFailed(field_errors=errors)
    return cleaned


@transaction.atomic
def redaction_policy_update(*, org: Organization, by=None, **changes) -> Organization:
    """Changes the policy: `kinds` (a subset of core.sensitive.KINDS) and `keep_recordings_with_sensitive_data`.
    `by` is the dashboard's user (an admin); through the API the key's write scope was checked by the view. A
    principal limited to locations is refused (403): the policy covers every location. Applies to what is taken in
    from now on; calls already stored are redacted again by `manage.py redact_stored_calls`."""
    scope = location_ids_of(org)
    if scope is not None:
        raise ScopeForbidden("the redaction policy", scope)
    if by is not None:
        require_admin(user=by, org=org)
    cleaned = _clean(changes)
    locked = Organization.objects.select_for_update().get(pk=org.pk)
    shown = {"redaction_kinds": "kinds"}  # the entry names the fields as the API does
    before = {shown.get(field, field): getattr(locked, field) for field in cleaned}
    for field, value in cleaned.items():
        setattr(locked, field, value)
    if cleaned:
        locked.save(update_fields=[*cleaned, "updated_at"])
    if diff := audit.diff(before, {shown.get(field, field): value for field, value in cleaned.items()}):
        audit.record(org=locked, action="privacy.redaction_updated", target=locked, changes=diff)
        _keys_reread(locked)  # keys cache their organization: the next request reads the new policy
    return locked
