"""The call list item and detail are built directly (calls.payloads) for speed; they must say exactly what their
documented DRF fields say."""

from rest_framework import serializers

from calls.api.serializers import CallDetailSerializer, CallSerializer
from calls.selectors import call_get, call_list


def drf_representation(serializer_class, call) -> dict:
    # The representation DRF's declared fields give (what the OpenAPI schema documents).
    return serializers.ModelSerializer.to_representation(serializer_class(), call)


def test_the_list_item_equals_its_declared_fields(runtime, org):
    order_call, _ = runtime.start()
    runtime.complete(order_call)
    runtime.upload(order_call)
    info_call, _ = runtime.start(from_number=None)
    runtime.complete(info_call, outcome="info", outcome_tags=[], caller={"name": None, "email": None})
    in_progress, _ = runtime.start()
    rows = list(call_list(org=org))
    assert len(rows) == 3
    for call in rows:
        assert CallSerializer(call).data == drf_representation(CallSerializer, call)


def test_the_detail_equals_its_declared_fields(runtime, org):
    call_id, _ = runtime.start()
    runtime.complete(call_id)
    call = call_get(org=org, call_id=runtime.call(call_id).pk)
    assert CallDetailSerializer(call).data == drf_representation(CallDetailSerializer, call)
