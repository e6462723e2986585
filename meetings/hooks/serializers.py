"""Request shape of the status hook: a receiver's progress post on a dispatch.

Strict (api.serializers.StrictInputSerializer): an unknown key or a body that is not an object goes in
`formErrors`, a bad field in `fieldErrors` under its name. `dispatch_report_progress` checks the same rules again.
"""

from rest_framework import serializers

from api.serializers import StrictInputSerializer
from meetings.services import REPORTABLE_STATES
from meetings.validation import TEXT


class DispatchProgressSerializer(StrictInputSerializer):
    state = serializers.ChoiceField(choices=list(REPORTABLE_STATES))
    detail = serializers.CharField(max_length=TEXT, allow_null=True, allow_blank=True, trim_whitespace=False,
                             required=False, default=None)
