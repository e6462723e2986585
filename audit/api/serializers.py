from rest_framework import serializers

from audit.actions import ACTIONS, is_known_filter
from core.api.serializers import RangeDateTimeField
from core.api.views import ListParams


class AuditEventListParams(ListParams):
    action = serializers.CharField(
        required=False, max_length=64,
        help_text="An action (`api_key.revoked`) or a prefix of actions ending in `.` (`webhook_subscription.`).",
    )
    actor_id = serializers.CharField(required=False, max_length=64, help_text="Only entries by this actor.")
    target_id = serializers.CharField(required=False, max_length=64, help_text="Only entries about this object.")
    since = RangeDateTimeField(required=False, help_text="Entries at or after (ISO 8601).")
    until = RangeDateTimeField(required=False, help_text="Entries at or before (ISO 8601).")

    def validate_action(self, value):
        if not is_known_filter(value):
            raise serializers.ValidationError("Unknown action: give an action or a prefix ending in `.`.")
        return value

    def validate(self, attrs):
        if attrs.get("since") and attrs.get("until") and attrs["since"] > attrs["until"]:
            raise serializers.ValidationError({"until": ["until must not be before since."]})
        return attrs


class PartySerializer(serializers.Serializer):
    type = serializers.CharField(help_text="user | api_key | runtime | system for an actor; the object's kind.")
    id = serializers.CharField(allow_null=True)
    label = serializers.CharField(help_text="A user's e-mail, a key's name and prefix, an object's name.")


class ChainSerializer(serializers.Serializer):
    seq = serializers.IntegerField(help_text="Position in the organization's chain, from 1.")
    prev_hash = serializers.CharField(help_text="The previous entry's hash (64 zeros for the first).")
    hash = serializers.CharField(help_text="sha256 of the entry's canonical bytes (docs/api.md#audit-trail).")


class AuditEventSerializer(serializers.Serializer):
    """Documents the shape audit.selectors.entry_data builds."""

    id = serializers.UUIDField()
    occurred_at = serializers.DateTimeField()
    action = serializers.ChoiceField(choices=sorted(ACTIONS))
    actor = PartySerializer()
    target = PartySerializer()
    changes = serializers.DictField(help_text="`{field: [before, after]}`; secrets are `[redacted]`.")
    ip = serializers.CharField(allow_null=True)
    user_agent = serializers.CharField(allow_null=True)
    request_id = serializers.CharField(allow_null=True)
    chain = ChainSerializer(allow_null=True, help_text="null until sealed (right after commit).")


class AuditVerifySerializer(serializers.Serializer):
    intact = serializers.BooleanField()
    entries_checked = serializers.IntegerField()
    first_broken_id = serializers.UUIDField(allow_null=True)
