"""Org-scoped reads of what the agent knows, and the runtime's knowledge read under one version and ETag."""

from django.db.models import Q

from core.timefmt import iso_ms
from orgs.models import Location, Organization

from .models import Calendar, CallField, EscalationRule, Fact, TeamMember


def location_list(*, org):
    """The org's locations, for cursor pagination (newest first). One query per page."""
    return Location.objects.for_org(org)


def fact_list(*, org):
    return Fact.objects.for_org(org)


def team_member_list(*, org):
    return TeamMember.objects.for_org(org)


def escalation_rule_list(*, org):
    return EscalationRule.objects.for_org(org)


def calendar_list(*, org):
    return Calendar.objects.for_org(org)


def call_field_list(*, org):
    return CallField.objects.for_org(org)


def call_fields_that_apply(*, org, location_id=None):
    """The org's call fields that apply to a call at `location_id` (by name): those for every location, and those
    naming this one. A call without a location gets only the former. At most one per name: definitions of a name
    never meet at a location (knowledge.services `_refuse_call_field_overlap`)."""
    applies = Q(location_ids__isnull=True)
    if location_id is not None:
        applies |= Q(location_ids__contains=[location_id])
    return CallField.objects.for_org(org).filter(applies).order_by("name")


def call_field_data(call_field: CallField) -> dict:
    """A call field as the runtime and the API show it."""
    return {
        "id": str(call_field.id), "name": call_field.name, "label": call_field.label,
        "description": call_field.description, "type": call_field.type, "choices": list(call_field.choices),
        "required": call_field.required,
        "location_ids": None if call_field.location_ids is None else [str(pk) for pk in call_field.location_ids],
        "created_at": iso_ms(call_field.created_at), "updated_at": iso_ms(call_field.updated_at),
    }


def knowledge_version(org) -> int:
    """The org's `knowledge_version`, read fresh (one query): every write the runtime reads bumps it in its own
    transaction (knowledge.services.knowledge_version_bump)."""
    return Organization.objects.filter(pk=org.pk).values_list("knowledge_version", flat=True).get()


def knowledge_etag(org, version: int | None = None) -> str:
    """The one ETag of the agent runtime's knowledge: `"knowledge-<version>.<org updated_at in ms>"`.

    The version covers the knowledge rows; the org's own `updated_at` covers its settings, which the runtime's
    knowledge also carries. `updated_at` is taken from `org` as loaded, i.e. the settings the caller serves.
    Without `version` it is read fresh (one query), so an unchanged knowledge base answers 304 without loading it.
    """
    if version is None:
        version = knowledge_version(org)
    return f'"knowledge-{version}.{int(org.updated_at.timestamp() * 1000)}"'


def knowledge_for_org(org) -> tuple[str, dict]:
    """What the agent runtime answers from: (etag, {"version", "facts", "locations", "team_members"}).

    The ETag is `knowledge_etag`. The version is read BEFORE the rows: under READ COMMITTED the rows are then at
    least that new, so an ETag never labels older data (at worst newer data carries the older tag, and the next
    read fetches again). Items have the public /v1 shapes. `runtime_knowledge` adds escalation rules, calendars
    and the org's settings under the same ETag.
    """
    version = knowledge_version(org)
    facts = [
        {"id": str(f.id), "label": f.label, "content": f.content,
         "location_id": str(f.location_id) if f.location_id else None,
         "created_at": iso_ms(f.created_at), "updated_at": iso_ms(f.updated_at)}
        for f in Fact.objects.for_org(org).order_by("label", "id")
    ]
    locations = [
        {"id": str(loc.id), "name": loc.name, "address": loc.address, "timezone": loc.timezone,
         "phone_number": loc.phone_number, "created_at": iso_ms(loc.created_at), "updated_at": iso_ms(loc.updated_at)}
        for loc in Location.objects.for_org(org).order_by("name", "id")
    ]
    team_members = [
        {"id": str(m.id), "name": m.name, "email": m.email, "phone_number": m.phone_number, "role": m.role,
         "is_platform_user": m.is_platform_user,
         "created_at": iso_ms(m.created_at), "updated_at": iso_ms(m.updated_at)}
        for m in TeamMember.objects.for_org(org).order_by("name", "id")
    ]
    data = {"version": version, "facts": facts, "locations": locations, "team_members": team_members}
    return knowledge_etag(org, version), data


def runtime_knowledge_etag(*, org: Organization) -> str:
    """The current ETag alone (one small query), so an unchanged knowledge base answers 304 without loading it."""
    return knowledge_etag(org)


def runtime_knowledge(*, org: Organization) -> tuple[str, dict]:
    """What the runtime answers from: facts, locations, team members, escalation rules, calendars and the org
    settings that steer a call. Read fresh on every request; the ETag is `knowledge_etag`: the knowledge version
    (bumped by every write to any of these) and the org's own `updated_at` (its settings)."""
    etag, data = knowledge_for_org(org)
    rules = [
        {"id": str(r.id), "name": r.name, "description": r.description, "keywords": r.keywords,
         "destination_type": r.destination_type,
         "destination_team_member_id": str(r.destination_team_member_id) if r.destination_team_member_id else None,
         "destination_phone": r.destination_phone,
         "location_id": str(r.location_id) if r.location_id else None}
        for r in escalation_rule_list(org=org).filter(enabled=True).order_by("name", "id")
    ]
    calendars = [
        {"id": str(c.id), "name": c.name, "timezone": c.timezone, "slot_minutes": c.slot_minutes,
         "location_id": str(c.location_id) if c.location_id else None, "weekly_hours": c.weekly_hours}
        for c in calendar_list(org=org).order_by("name", "id")
    ]
    organization = {
        "id": str(org.id), "name": org.name, "default_phone_region": org.default_phone_region,
        "call_recording_enabled": org.call_recording_enabled, "auto_save_contacts": org.auto_save_contacts,
    }
    # Every field with its `location_ids`: the runtime keeps those that apply to the call's location (null: all).
    call_fields = [call_field_data(f) for f in call_field_list(org=org).order_by("name", "id")]
    return etag, {**data, "organization": organization, "escalation_rules": rules, "calendars": calendars,
                  "call_fields": call_fields}


