"""GET /v1/analytics/calls: the call figures per local day, week, location or outcome (calls.analytics)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers

from api.docs import envelope, error_responses
from api.serializers import RangeDateField
from api.views import ListParams, OrgAPIView, data_response
from calls import analytics
from core.errors import ValidationFailed


class AnalyticsParams(ListParams):
    limit = None  # one answer, not a page
    cursor = None
    since = RangeDateField(
        required=False, help_text="The first local day (YYYY-MM-DD, the organization's time zone). Default: 29 days "
        "before `until` (30 days).")
    until = RangeDateField(
        required=False, help_text="The last local day, included. Default: today in the organization's time zone.")
    group_by = serializers.ChoiceField(choices=analytics.GROUPINGS, required=False, default="day")
    location_id = serializers.UUIDField(required=False, help_text="Only the calls of this location.")


class FiguresSerializer(serializers.Serializer):
    calls = serializers.IntegerField(help_text="Calls started in the bucket, whatever their status or classification.")
    real_engagements = serializers.IntegerField()
    outcomes = serializers.DictField(child=serializers.IntegerField(),
                                     help_text="Calls per outcome; calls without an outcome are not listed.")
    escalations = serializers.IntegerField(help_text="Calls with disposition `escalated`.")
    escalation_rate = serializers.FloatField(allow_null=True, help_text="escalations / calls; null without calls.")
    average_duration_seconds = serializers.FloatField(allow_null=True, help_text="Over the calls with a duration.")
    average_quality_score = serializers.FloatField(allow_null=True, help_text="Over the scorable calls with a score.")
    bookings = serializers.IntegerField(help_text="Bookings made on these calls, canceled ones included.")
    orders = serializers.IntegerField(help_text="Orders placed on these calls.")
    unanswered_questions = serializers.IntegerField(help_text="Questions the agent could not answer on these calls.")
    fields = serializers.DictField(
        child=inline_serializer(name="CallFieldFigures", fields={
            "sum": serializers.FloatField(), "count": serializers.IntegerField(),
            "average": serializers.FloatField(allow_null=True)}),
        help_text="Per `number` call field with a value in the range (each bucket names the same ones): the sum, "
        "count and average (2 decimals; null without values) of the values the calls stored.")


class BucketSerializer(FiguresSerializer):
    key = serializers.CharField(
        allow_null=True, help_text="The day, the week's Monday, the location id (null: calls without a location) or "
        "the outcome (empty: calls without one).")
    since = serializers.DateField(required=False, help_text="Day and week buckets: their first day in the range.")
    until = serializers.DateField(required=False, help_text="Day and week buckets: their last day in the range.")


class CallAnalyticsSerializer(serializers.Serializer):
    since = serializers.DateField()
    until = serializers.DateField()
    time_zone = serializers.CharField(help_text="The organization's IANA time zone: the days are its own.")
    group_by = serializers.ChoiceField(choices=analytics.GROUPINGS)
    buckets = BucketSerializer(many=True)
    totals = FiguresSerializer()


class CallAnalyticsView(OrgAPIView):
    @extend_schema(
        operation_id="analytics_calls",
        summary="Call analytics",
        description="The figures of the calls that started on the local days `since`..`until` (both included, at "
        f"most {analytics.MAX_DAYS} days; the organization's time zone), per `group_by` bucket: every day or week of "
        "the range (empty ones included, weeks start on Monday), or each location or outcome with calls (most calls "
        "first). Read from a rollup kept in the same transaction as each call write: always current.",
        parameters=[AnalyticsParams],
        responses={200: envelope(CallAnalyticsSerializer), **error_responses(400)},
        tags=["Analytics"],
    )
    def get(self, request):
        params = self.validate_query(AnalyticsParams)
        until = params.get("until") or analytics.local_today(self.org)
        since = params.get("since") or analytics.default_since(until)
        errors = analytics.range_errors(since, until)
        if errors:
            raise ValidationFailed(field_errors=errors)
        location_ids = [params["location_id"]] if "location_id" in params else None
        return data_response(analytics.call_analytics(
            org=self.org, since=since, until=until, group_by=params["group_by"], location_ids=location_ids))
