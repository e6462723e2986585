"""The webhook subscription API: thin views over webhooks.services and webhooks.selectors."""

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import Throttled
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.views import ListParams, OrgAPIView, data_response, list_response, paginate

from .. import probe, quotas, replay, selectors, services
from ..models import Subscription
from .serializers import (
    DeliverySerializer,
    ReconciliationParams,
    ReconciliationSerializer,
    RecoverInput,
    RecoverResultSerializer,
    ReplayInput,
    ReplayResultSerializer,
    RotateSecretInput,
    SubscriptionCreateInput,
    SubscriptionSerializer,
    SubscriptionStatsSerializer,
    SubscriptionUpdateInput,
    SubscriptionWithSecretSerializer,
    TestDeliveryInput,
    TestDeliveryResultSerializer,
)

TAGS = ["Webhook subscriptions"]


def _with_secret(subscription, secret, status):
    return Response(
        {"data": SubscriptionSerializer(subscription).data, "secret": secret, "warning": services.SECRET_WARNING},
        status=status,
    )


class SubscriptionBaseView(OrgAPIView):
    model = Subscription


class SubscriptionListView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="List webhook subscriptions",
        operation_id="webhook_subscriptions_list",
        parameters=[ListParams],
        responses={200: list_envelope(SubscriptionSerializer), **error_responses(400)},
    )
    def get(self, request):
        params = self.validate_query(ListParams)
        queryset = selectors.subscription_list(org=self.org)
        rows, has_more, cursor = paginate(queryset, params, scope="webhook-subscriptions")
        return list_response(SubscriptionSerializer(rows, many=True).data, has_more, cursor)

    @extend_schema(
        tags=TAGS,
        summary="Create a webhook subscription",
        description="The response carries the signing secret, once. The URL must be https:// and must not resolve "
        "to a loopback, private, link-local, multicast, reserved or cloud-metadata address. 409 `conflict` "
        "(`details.field` = `subscriptions`) when the organization has its quota of subscriptions "
        "(`QUOTA_SUBSCRIPTIONS_PER_ORG`, 20). `location_ids` limits it to those locations' events; a key limited "
        "to locations creates only subscriptions limited to some of its own (403 `forbidden` otherwise).",
        request=SubscriptionCreateInput,
        responses={201: SubscriptionWithSecretSerializer, **error_responses(400, 403, 409)},
    )
    def post(self, request):
        body = self.validate_body(SubscriptionCreateInput)
        subscription, secret = services.subscription_create(org=self.org, **body)
        return _with_secret(subscription, secret, 201)


class SubscriptionDetailView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS, summary="Get a webhook subscription",
        responses={200: envelope(SubscriptionSerializer), **error_responses(404)},
    )
    def get(self, request, pk):
        return data_response(SubscriptionSerializer(self.get_object(pk)).data)

    @extend_schema(
        tags=TAGS,
        summary="Update a webhook subscription",
        description="Any of url, events, description, enabled, rate_limit_per_second, location_ids. Enabling "
        "clears the disabled reason; narrowing the locations drops what still waits for it from the others.",
        request=SubscriptionUpdateInput,
        responses={200: envelope(SubscriptionSerializer), **error_responses(400, 403, 404)},
    )
    def patch(self, request, pk):
        subscription = self.get_object(pk)
        body = self.validate_body(SubscriptionUpdateInput, partial=True)
        subscription = services.subscription_update(subscription=subscription, **body)
        return data_response(SubscriptionSerializer(subscription).data)

    @extend_schema(
        tags=TAGS, summary="Delete a webhook subscription", responses={204: None, **error_responses(403, 404)}
    )
    def delete(self, request, pk):
        services.subscription_delete(subscription=self.get_object(pk))
        return Response(status=204)


class RotateSecretView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="Rotate the signing secret",
        description="Replaces the secret atomically. The old one stops signing at once, unless "
        "`grace_period_seconds` (max 86400) asks that both sign meanwhile.",
        request=RotateSecretInput,
        responses={200: SubscriptionWithSecretSerializer, **error_responses(400, 403, 404)},
    )
    def post(self, request, pk):
        subscription = self.get_object(pk)
        body = self.validate_body(RotateSecretInput)
        subscription, secret = services.subscription_rotate_secret(subscription=subscription, **body)
        return _with_secret(subscription, secret, 200)


class DeliveryListView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="List a subscription's deliveries with their attempt log",
        operation_id="webhook_subscription_deliveries_list",
        parameters=[ListParams],
        responses={200: list_envelope(DeliverySerializer), **error_responses(400, 404)},
    )
    def get(self, request, pk):
        subscription = self.get_object(pk)
        params = self.validate_query(ListParams)
        rows, has_more, cursor = paginate(
            selectors.delivery_log(subscription), params, scope=f"webhook-deliveries:{subscription.pk}"
        )
        return list_response(DeliverySerializer(rows, many=True).data, has_more, cursor)


class ReconciliationView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="Reconcile a day of events",
        description="Over the events due to this subscription that were created on `date` (a UTC day): their "
        "number, the SHA-256 of their sorted ids joined by newlines (docs/webhooks.md#reconciliation shows the exact "
        "bytes and a receiver's check), and how many of their deliveries succeeded, are pending or failed.",
        operation_id="webhook_subscription_reconciliation",
        parameters=[ReconciliationParams],
        responses={200: envelope(ReconciliationSerializer), **error_responses(400, 404)},
    )
    def get(self, request, pk):
        params = self.validate_query(ReconciliationParams)
        subscription = self.get_object(pk)
        result = selectors.subscription_reconciliation(subscription, params["date"])
        return data_response(ReconciliationSerializer(result).data)


class StatsView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="A subscription's endpoint statistics",
        description="Over the last 24 hours and 7 days: attempts, success rate, p50/p95 response time and the most "
        "frequent errors; the deliveries waiting and the age of the oldest; whether fair delivery has slowed the "
        "endpoint down (it timed out, refused connections or answered 429) and why.",
        operation_id="webhook_subscription_stats",
        responses={200: envelope(SubscriptionStatsSerializer), **error_responses(404)},
    )
    def get(self, request, pk):
        stats = selectors.subscription_stats(self.get_object(pk))
        return data_response(SubscriptionStatsSerializer(stats).data)


class DeliveryRetryView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="Retry one delivery now",
        description="Queues one more attempt at once (trigger `manual`). 202 with the delivery.",
        request=None,
        responses={202: envelope(DeliverySerializer), **error_responses(403, 404, 409)},
    )
    def post(self, request, pk, delivery_id):
        subscription = self.get_object(pk)
        delivery = self.get_object(delivery_id, queryset=selectors.delivery_log(subscription))
        delivery = services.delivery_retry(delivery=delivery)
        delivery = selectors.delivery_log(subscription).get(pk=delivery.pk)
        return data_response(DeliverySerializer(delivery).data, status=202)


REPLAY_QUOTAS = (
    "One replay or recover in progress per subscription: while deliveries an earlier one queued are waiting, 409 "
    "`conflict` (`details.field` = `replay`). At most `QUOTA_REPLAY_DELIVERIES_PER_HOUR` (100,000) deliveries "
    "queued by replays and recovers per organization in any hour: past it 429 `rate_limited` with Retry-After "
    "(400 on `since` when one alone would queue more). Nothing is queued when refused."
)


class RecoverView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="Re-queue failed deliveries since a time",
        description="Every failed delivery of this subscription created since `since` (at most 30 days ago) is "
        "queued again with a fresh set of attempts. 202 with the count. " + REPLAY_QUOTAS,
        request=RecoverInput,
        responses={202: envelope(RecoverResultSerializer), **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, pk):
        subscription = self.get_object(pk)
        body = self.validate_body(RecoverInput)
        try:
            count = services.deliveries_recover(subscription=subscription, **body)
        except quotas.ReplayQuotaReached as exc:
            raise Throttled(wait=exc.retry_after) from None
        return data_response({"requeued": count}, status=202)


class ReplayView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="Replay events to this subscription",
        description="Queues every event of the organization created in [since, until] (since at most 30 days ago, "
        "until defaulting to now) whose type this subscription receives (and is in `types` when given) and that has "
        "no delivery to it that succeeded or is pending: events emitted while it was disabled or before it existed "
        "included, failed deliveries re-armed. Each is sent with its original `evt_` id and body bytes; the same "
        "replay again queues 0. 409 `conflict` (`details.field` = `enabled`) on a disabled subscription. "
        + REPLAY_QUOTAS,
        request=ReplayInput,
        responses={202: envelope(ReplayResultSerializer), **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, pk):
        subscription = self.get_object(pk)
        body = self.validate_body(ReplayInput)
        try:
            queued = replay.subscription_replay(subscription=subscription, **body)
        except quotas.ReplayQuotaReached as exc:
            raise Throttled(wait=exc.retry_after) from None
        return data_response({"queued": queued}, status=202)


class TestDeliveryView(SubscriptionBaseView):
    @extend_schema(
        tags=TAGS,
        summary="Send a test event and check the receiver",
        description="Sends, synchronously, an example of `type` (default `call.ended`) signed with the "
        "subscription's secret, then two forgeries under fresh webhook-ids (a wrong signature; a timestamp 10 minutes "
        "old), and answers with a verdict on what the receiver did. Ids start `evt_test_`. Nothing is retried, "
        "logged as a delivery, or counted toward the subscription's health. The three POSTs share 5 s in all "
        "(`WEBHOOK_TEST_BUDGET_SECONDS`): a receiver that has not answered by then is `unreachable`. 10 tests per "
        "subscription per minute, 1 at a time per organization, at most one web worker in four of a node running "
        "one, and once more than half of those do, the rest for organizations that have not run one lately: over "
        "any of these, 429 `rate_limited` with Retry-After and nothing is sent.",
        request=TestDeliveryInput,
        responses={200: envelope(TestDeliveryResultSerializer), **error_responses(400, 403, 404)},
    )
    def post(self, request, pk):
        subscription = self.get_object(pk)
        body = self.validate_body(TestDeliveryInput)
        wait = probe.take_test_slot(subscription)
        if wait is not None:
            raise Throttled(wait=wait)
        try:
            return data_response(probe.send_test(subscription=subscription, event_type=body["type"]))
        except probe.TestsBusy as busy:
            raise Throttled(wait=busy.wait) from None
