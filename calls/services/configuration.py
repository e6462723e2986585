"""What configures the agent runtime on the calls side: escalation rules and bookable calendars. Each write bumps
the org's knowledge version, so the runtime's knowledge ETag changes and it reads them fresh."""

from django.db import IntegrityError, transaction

from orgs.models import Organization
from orgs.services import knowledge_version_bump
from voiceagent.errors import Conflict, ValidationFailed

from ..models import Calendar, EscalationRule


@transaction.atomic
def escalation_rule_create(
    *,
    org: Organization,
    name: str,
    destination_type: str,
    destination_team_member=None,
    destination_phone: str | None = None,
    keywords: list[str] | None = None,
    description: str = "",
) -> EscalationRule:
    """Creates an escalation rule and bumps the org's knowledge version (the runtime's ETag changes)."""
    if destination_type == EscalationRule.DestinationType.TEAM_MEMBER and destination_team_member is None:
        raise ValidationFailed(field_errors={"destination_team_member": ["Required for a team_member rule."]})
    if destination_type == EscalationRule.DestinationType.PHONE and not destination_phone:
        raise ValidationFailed(field_errors={"destination_phone": ["Required for a phone rule."]})
    try:
        with transaction.atomic():
            rule = EscalationRule.objects.create(
                organization=org, name=name, destination_type=destination_type,
                destination_team_member=destination_team_member, destination_phone=destination_phone,
                keywords=list(keywords or []), description=description,
            )
    except IntegrityError:
        raise Conflict("name") from None
    knowledge_version_bump(org=org)
    return rule


@transaction.atomic
def calendar_create(*, org: Organization, name: str, timezone_name: str = "UTC", location=None) -> Calendar:
    """Creates a bookable calendar and bumps the org's knowledge version."""
    try:
        with transaction.atomic():
            calendar = Calendar.objects.create(organization=org, name=name, timezone=timezone_name, location=location)
    except IntegrityError:
        raise Conflict("name") from None
    knowledge_version_bump(org=org)
    return calendar
