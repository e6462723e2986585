from rest_framework import serializers

from api.serializers import RangeDateTimeField
from api.views import ListParams
from audit.actions import ACTIONS, is_known_filter


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
    intact = serializers.BooleanField(
        allow_null=True, help_text="true: every entry through the head holds; false: a break (`first_broken_id`, or "
        "null when the newest entries are missing); null: more entries were unverified than one request checks "
        "(`complete` false).")
    complete = serializers.BooleanField(help_text="Whether this answer reached the head (or a break).")
    entries_checked = serializers.IntegerField(
        help_text="Entries from the oldest kept through the last one checked, by this request or earlier ones.")
    entries_hashed = serializers.IntegerField(help_text="Entries this request hashed (at most "
                                              "`AUDIT_VERIFY_MAX_ENTRIES`).")
    first_broken_id = serializers.UUIDField(allow_null=True)
    verified_through_seq = serializers.IntegerField(help_text="The organization's checkpoint after this request.")
    head_seq = serializers.IntegerField(help_text="The chain's head: the last sealed position.")


class VerificationProgressSerializer(serializers.Serializer):
    entries_checked = serializers.IntegerField()
    head_seq = serializers.IntegerField(allow_null=True, help_text="The head the job checks up to (set when it "
                                        "starts).")


class VerificationResultSerializer(serializers.Serializer):
    intact = serializers.BooleanField()
    entries_checked = serializers.IntegerField()
    first_broken_id = serializers.UUIDField(allow_null=True)


class AuditVerificationSerializer(serializers.Serializer):
    """Documents the shape audit.selectors.verification_data builds."""

    id = serializers.UUIDField()
    object = serializers.CharField(help_text="Always `audit_verification`.")
    status = serializers.ChoiceField(choices=["queued", "running", "succeeded", "failed"])
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    progress = VerificationProgressSerializer()
    result = VerificationResultSerializer(allow_null=True, help_text="Set once `status` is `succeeded`.")
    error = serializers.CharField(allow_null=True, help_text="Why a `failed` job stopped (`abandoned`).")


class SignedHeadSerializer(serializers.Serializer):
    organization_id = serializers.UUIDField()
    seq = serializers.IntegerField(help_text="The head's position (0: no entry yet).")
    hash = serializers.CharField(help_text="The head entry's `chain.hash` (64 zeros with no entry).")
    entry_id = serializers.UUIDField(allow_null=True, help_text="The head entry's id.")
    signed_at = serializers.CharField(help_text="UTC, milliseconds, `Z`.")
    payload = serializers.CharField(help_text="The signed text: the five fields above as canonical JSON.")
    algorithm = serializers.CharField(help_text="Always `ed25519`.")
    signature = serializers.CharField(help_text="Ed25519 signature of the payload's UTF-8 bytes, base64.")
    public_key = serializers.CharField(help_text="The raw 32-byte Ed25519 public key, base64.")
    key_id = serializers.CharField(help_text="The first 16 hex digits of the public key's SHA-256.")
