from rest_framework import serializers

from api.serializers import OutputModelSerializer, StrictInputSerializer
from api.views import ListParams
from contacts.models import Contact


class ContactSerializer(OutputModelSerializer):
    """A contact. `phone_number` is E.164 and unique per organization; `source` says who created it (`api`,
    `dashboard` or `inbound_call`); `first_call_id` is the call that created it, if any."""

    class Meta:
        model = Contact
        fields = [
            "id", "phone_number", "name", "email", "notes", "source", "first_call_id", "created_at", "updated_at",
        ]


class ContactInputSerializer(StrictInputSerializer):
    """POST: `phone_number` required, normalized to E.164 in the org's default region. PATCH: any subset."""

    # Not trimmed here: DRF would measure min_length after trimming, refusing what the schema's minLength allows;
    # the service strips and parses the number.
    phone_number = serializers.CharField(
        min_length=10, max_length=32, trim_whitespace=False,
        help_text="E.164, or a national number of the organization's default region.",
    )
    name = serializers.CharField(max_length=200, required=False, allow_null=True, allow_blank=True)
    email = serializers.EmailField(max_length=254, required=False, allow_null=True, allow_blank=True)
    notes = serializers.CharField(max_length=5000, required=False, allow_null=True, allow_blank=True)


class ContactListParams(ListParams):
    search = serializers.CharField(
        required=False, allow_blank=True, max_length=200,
        help_text="Matches name and email (case-insensitive substring) and phone by digits.",
    )
