"""/v1/privacy/redaction: the organization's redaction policy (orgs.redaction). Thin: validate, call, render."""

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers

from api.docs import envelope, error_responses
from api.serializers import StrictInputSerializer
from api.views import OrgAPIView, data_response
from core.sensitive import KINDS
from orgs import redaction


class RedactionPolicySerializer(serializers.Serializer):
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=list(KINDS)),
        help_text="The kinds of sensitive data replaced by `[kind]` in calls' text before anything is stored. "
                  "New and existing organizations start with card_number, government_id and bank_account.",
    )
    keep_recordings_with_sensitive_data = serializers.BooleanField(
        help_text="false (the default): a call where a card, government id or bank account number was heard "
                  "keeps no recording (GET .../recording answers 404 recording_withheld).",
    )
    detector_version = serializers.CharField(
        help_text="The detector's version; a call shows the version that redacted it (`redaction.detector_version`).",
    )


@extend_schema_field({"type": "array", "items": {"type": "string", "enum": list(KINDS)}, "maxItems": len(KINDS) * 4})
class _KindsInput(serializers.ListField):
    """Any strings here (the service names every unknown kind at once, under `kinds`); the schema states the kinds."""


class RedactionPolicyInput(StrictInputSerializer):
    kinds = _KindsInput(child=serializers.CharField(max_length=64), max_length=len(KINDS) * 4, required=False)
    keep_recordings_with_sensitive_data = serializers.BooleanField(required=False)


class RedactionPolicyView(OrgAPIView):
    @extend_schema(
        operation_id="privacy_redaction_get",
        summary="The redaction policy",
        description="Which kinds of sensitive data are redacted from calls' text at ingest, and whether recordings "
                    "of calls where a card, government id or bank account number was heard are kept.",
        responses={200: envelope(RedactionPolicySerializer), **error_responses(401, 429)},
        tags=["Privacy"],
    )
    def get(self, request):
        return data_response(redaction.redaction_policy_data(self.org))

    @extend_schema(
        operation_id="privacy_redaction_update",
        summary="Change the redaction policy",
        description="Write scope. An unknown kind is 400 under `fieldErrors.kinds`. A key limited to locations is "
                    "403 `forbidden`: the policy covers the whole organization. Audited as "
                    "`privacy.redaction_updated`. Applies to what is taken in from now on.",
        request=RedactionPolicyInput,
        responses={200: envelope(RedactionPolicySerializer), **error_responses(400, 403, 401, 429)},
        tags=["Privacy"],
    )
    def patch(self, request):
        data = self.validate_body(RedactionPolicyInput)
        org = redaction.redaction_policy_update(org=self.org, **data)
        return data_response(redaction.redaction_policy_data(org))
