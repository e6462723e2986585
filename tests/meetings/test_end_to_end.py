"""End to end: the runtime posts a meeting over HTTP to the live server, an admin approves and dispatches it in
the dashboard, a real Celery worker delivers `meeting.outcome_approved` to a real HTTP receiver on loopback, the
receiver verifies the Standard Webhooks signature and posts its progress back to `status_url`, and the dashboard
shows the dispatch done."""

import json
import threading
import urllib.error
import urllib.request

import pytest
from django.conf import settings as django_settings
from django.test import Client
from standardwebhooks import Webhook

from meetings.models import Dispatch, Meeting
from tests.support.meetings import ingest_body
from tests.support.receiver import Receiver
from webhooks.services import subscription_create

WORKER_ENV = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_RETRY_SCHEDULE": ",".join(["0.5"] * 9),
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.5",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "2",
}


def http_post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - a loopback test URL
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


class ProgressReceiver(Receiver):
    """A subscriber: verifies each delivery with `standardwebhooks`, answers 204 at once (401 when the signature
    is wrong), then, in the background, posts `acked` and `done` to the event's status_url."""

    def __init__(self, secret: str):
        super().__init__(status=self.verify, reply=b"")
        self.secret = secret
        self.verified: list[dict] = []
        self.rejected = 0
        self.progress: list[tuple[str, int, dict]] = []
        self.done = threading.Event()

    def verify(self, call: dict) -> int:
        try:
            payload = Webhook(self.secret).verify(call["body"], call["headers"])
        except Exception:  # noqa: BLE001 - any verification failure is a refusal
            self.rejected += 1
            return 401
        self.verified.append(payload)
        threading.Thread(target=self.report, args=(payload,), daemon=True).start()
        return 204

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/meetings-hook"

    def report(self, payload: dict) -> None:
        status_url = payload["data"]["status_url"]
        for state, detail in (("acked", None), ("done", "Created PROJ-101 and PROJ-102")):
            body = {"state": state} if detail is None else {"state": state, "detail": detail}
            status, response = http_post(status_url, body)
            self.progress.append((state, status, response))
        self.done.set()


@pytest.mark.django_db(transaction=True)
def test_dispatch_is_delivered_signed_and_progress_comes_back(
    live_server, settings, meetings_org, meetings_admin, celery_worker_factory
):
    settings.BASE_URL = live_server.url  # status_url must reach this live server
    settings.DASHBOARD_URL = live_server.url
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True  # the subscription below points at loopback

    # 1. The meetings runtime posts the drafted outcome over real HTTP.
    status, created = http_post(
        f"{live_server.url}/internal/agent/v1/orgs/{meetings_org.pk}/meetings", ingest_body(),
        headers={"Authorization": f"Bearer {django_settings.AGENT_RUNTIME_TOKEN}"},
    )
    assert status == 201, created
    meeting = Meeting.objects.get(pk=created["data"]["meeting_id"])

    celery_worker_factory(concurrency=1, beat=True, env=WORKER_ENV)
    dashboard = Client()
    assert dashboard.login(username=meetings_admin.username, password="correct-horse-battery")

    with ProgressReceiver(secret="") as receiver:
        _, secret = subscription_create(org=meetings_org, url=receiver.url, events=["meeting.outcome_approved"])
        receiver.secret = secret

        # 2. The admin approves, then dispatches, in the dashboard.
        assert dashboard.post(f"/meetings/{meeting.pk}/approve").status_code == 302
        assert dashboard.post(f"/meetings/{meeting.pk}/dispatch").status_code == 302
        dispatch = Dispatch.objects.get(outcome__meeting=meeting)

        # 3. The worker delivers; the receiver verifies and posts acked, then done.
        assert receiver.done.wait(60), f"no progress posted; verified={receiver.verified} rejected={receiver.rejected}"

    assert receiver.rejected == 0 and len(receiver.verified) == 1
    data = receiver.verified[0]["data"]
    assert receiver.verified[0]["type"] == "meeting.outcome_approved"
    assert data["dispatch_id"] == str(dispatch.pk) and data["meeting_id"] == str(meeting.pk)
    assert data["meeting_url"] == f"{live_server.url}/meetings/{meeting.pk}"
    assert [(state, code, body["data"]["state"]) for state, code, body in receiver.progress] == [
        ("acked", 200, "acked"), ("done", 200, "done"),
    ]

    dispatch.refresh_from_db()
    assert dispatch.state == "done"
    assert list(dispatch.progress.values_list("state", "detail")) == [
        ("acked", ""), ("done", "Created PROJ-101 and PROJ-102"),
    ]
    # The meeting_url the subscriber got opens the dashboard page, which shows the dispatch done.
    page = dashboard.get(data["meeting_url"].removeprefix(live_server.url))
    assert page.status_code == 200
    assert b'data-testid="dispatch-state">Done' in page.content and b"PROJ-101" in page.content
