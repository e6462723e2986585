"""Redis behind Sentinel, failed over under a running API and worker (README "Redis with Sentinel"): a real gunicorn
and a real Celery worker (with beat), both given only REDIS_SENTINELS, keep serving and delivering after the primary
changes, without a restart; every event committed before, during and after the failover reaches the receiver; and
an API key revoked before the failover stays revoked on the new primary."""

import os
import subprocess
import sys

import pytest
import requests
from django.conf import settings

from calls.models import Call
from tests.factories import make_key
from tests.support import celery_worker
from tests.support.cluster import SentinelGroup
from tests.support.gunicorn import running_gunicorn
from tests.support.receiver import Receiver
from tests.support.runtime import completion, iso
from tests.support.waiting import wait_until
from webhooks.models import Event

pytestmark = [pytest.mark.cluster, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("cluster")]

FAST = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_RETRY_SCHEDULE": ",".join(["0.5"] * 9),
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.5",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "2",
    "WEBHOOK_LEASE_SECONDS": "5",
}


@pytest.fixture
def sentinel_group():
    group = SentinelGroup().start()
    yield group
    group.stop()


class RuntimeOverHttp:
    """The agent runtime's calls through a real server: start then complete, each complete one call.ended event."""

    def __init__(self, base: str, org):
        self.base = f"{base}/internal/agent/v1/orgs/{org.id}"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {settings.AGENT_RUNTIME_TOKEN}"
        self.statuses: list[int] = []

    def call(self, n: int) -> None:
        from tests.support.runtime import T0

        call_id = f"failover-{n}"
        for path, body in ((f"{self.base}/calls", {"call_id": call_id, "started_at": iso(T0),
                                                    "from_number": "+14155550123"}),
                           (f"{self.base}/calls/{call_id}/complete", completion())):
            self.statuses.append(self.session.post(path, json=body, timeout=30).status_code)


@pytest.mark.parametrize("kill", [False, True], ids=["sentinel-failover", "primary-killed"])
def test_api_and_workers_follow_a_failover_without_losing_an_event_or_a_revocation(
    org, admin, api, allow_local, celery_worker_factory, sentinel_group, tmp_path, kill
):
    env = {**sentinel_group.env(), **FAST}
    key, plaintext = make_key(org, admin=admin)
    with Receiver() as receiver, running_gunicorn(tmp_path / "gunicorn.log", **env) as port:
        created = api.post("/v1/webhook-subscriptions", {"url": receiver.url, "events": ["call.ended"]},
                           format="json")
        assert created.status_code == 201, created.json()
        worker = celery_worker_factory(concurrency=2, beat=True, env=env)
        base = f"http://127.0.0.1:{port}"
        me = requests.get(f"{base}/v1/me", headers={"Authorization": f"Bearer {plaintext}"}, timeout=30)
        assert me.status_code == 200, me.text  # and now trusted by the server's key cache
        runtime = RuntimeOverHttp(base, org)
        for n in range(5):
            runtime.call(n)
        wait_until(lambda: len(receiver.calls) >= 5, 60, worker.log)

        # Revoked (a separate process, as an operator would), seen by the server, replicated; then the failover.
        subprocess.run([sys.executable, "manage.py", "revoke_api_key", "--key-id", str(key.id)], check=True,
                       cwd=settings.BASE_DIR, capture_output=True, text=True,
                       env={**os.environ, **env, "DATABASE_URL": celery_worker.test_database_url(),
                            "DJANGO_SETTINGS_MODULE": "voiceagent.test_settings"})
        assert requests.get(f"{base}/v1/me", headers={"Authorization": f"Bearer {plaintext}"},
                            timeout=30).status_code == 401
        sentinel_group.wait_synced()
        old = sentinel_group.primary_port()
        for n in range(5, 10):
            runtime.call(n)
        new = sentinel_group.failover(kill=kill)
        assert new != old
        for n in range(10, 20):
            runtime.call(n)

        assert requests.get(f"{base}/v1/me", headers={"Authorization": f"Bearer {plaintext}"},
                            timeout=30).status_code == 401
        assert set(runtime.statuses) <= {200, 201}, runtime.statuses
        assert Call.objects.filter(organization=org).count() == 20
        events = set(Event.objects.filter(organization=org, type="call.ended").values_list("id", flat=True))
        assert len(events) == 20
        wait_until(lambda: {c["headers"]["webhook-id"] for c in receiver.calls} >= events, 90,
                   lambda: f"{len(events - {c['headers']['webhook-id'] for c in receiver.calls})} events not "
                           f"delivered:\n{worker.log()}")
        # The worker that delivered the last events is the one started before the failover, on the new primary:
        # its beat's claims for periods after the failover are there.
        assert worker.process.poll() is None
        primary = sentinel_group.primary()
        # The beat's own Redis client rides out the failover on its retry backoff (seconds, not a period), so its
        # next claim may follow the deliveries by more than 10 s on a loaded machine (it did once in CI).
        wait_until(lambda: primary.keys("*beat:webhooks-sweep:*"), 30,
                   lambda: f"a beat claim on the new primary:\n{worker.log()[-3000:]}")
