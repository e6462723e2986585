from rest_framework import serializers


class IdentitySerializer(serializers.Serializer):
    org_id = serializers.UUIDField()
    org_name = serializers.CharField()
    time_zone = serializers.CharField(
        help_text="The organization's IANA time zone (set in the dashboard): the dashboard and the analytics' days "
                  "follow it; timestamps stay UTC.",
    )
    key_id = serializers.UUIDField()
    key_name = serializers.CharField()
    key_prefix = serializers.CharField()
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=["read", "write", "audit", "privacy"]))
    location_ids = serializers.ListField(
        child=serializers.UUIDField(), allow_null=True,
        help_text="The locations this key is limited to; null: the whole organization (docs: Locations and scope).",
    )
