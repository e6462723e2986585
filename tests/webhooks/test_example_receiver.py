"""The documented example receiver verifies our deliveries and stores calls whatever order events arrive in."""

import importlib.util
import threading
from pathlib import Path

import pytest

from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks import crypto
from webhooks.models import Delivery
from webhooks.services import emit

pytestmark = pytest.mark.usefixtures("allow_local")


def load_example():
    path = Path(__file__).resolve().parents[2] / "examples" / "webhook_receiver.py"
    spec = importlib.util.spec_from_file_location("webhook_receiver_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recording_ready_before_call_ended_fills_one_row_and_duplicates_are_ignored(org, tmp_path):
    example = load_example()
    store = example.Store(str(tmp_path / "r.sqlite3"))
    sub = make_subscription(org, url="http://127.0.0.1:1/webhooks", events=["call.ended", "call.recording_ready"])
    server = example.make_server(sub.plain_secret, store, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        type(sub).objects.filter(pk=sub.pk).update(url=f"http://127.0.0.1:{server.server_address[1]}/webhooks")
        emit(org=org, type="call.recording_ready", data={"call_id": "c-1", "recording_available": True})
        [first] = Delivery.objects.all()
        assert attempt_delivery(first.pk) == "succeeded"
        assert store.call("c-1") == {"call_id": "c-1", "summary": None, "ended_at": None, "disposition": None,
                                     "recording_available": 1}
        ended = {"call_id": "c-1", "summary": "Booked", "ended_at": "2026-11-22T12:00:00Z", "disposition": "completed"}
        emit(org=org, type="call.ended", data=ended)
        second = Delivery.objects.exclude(pk=first.pk).get()
        assert attempt_delivery(second.pk) == "succeeded"
        # A duplicate delivery of the same event (same webhook-id) is acknowledged and changes nothing.
        Delivery.objects.filter(pk=second.pk).update(status="pending", next_attempt_at=first.created_at)
        assert attempt_delivery(second.pk) == "succeeded"
        assert store.call("c-1") == {"call_id": "c-1", "summary": "Booked", "ended_at": "2026-11-22T12:00:00Z",
                                     "disposition": "completed", "recording_available": 1}
        # A wrong signature is refused with 400 (a failed attempt on our side).
        type(sub).objects.filter(pk=sub.pk).update(secret_encrypted=crypto.encrypt(crypto.generate_secret()))
        emit(org=org, type="call.ended", data={"call_id": "c-2"})
        third = Delivery.objects.exclude(pk__in=[first.pk, second.pk]).get()
        assert attempt_delivery(third.pk) == "retry"
        assert store.call("c-2") is None
    finally:
        server.shutdown()
        server.server_close()
