"""A client nobody here wrote (issue 17, item 7): openapi-python-client generates a package from the live
/api/openapi.json, and that package, used as its README says, talks to a live gunicorn: who am I, create and search a
contact, page through calls, create a webhook subscription (README "API" has the same two commands)."""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.support.gunicorn import running_gunicorn
from tests.support.runtime import Runtime

pytestmark = [pytest.mark.schema_fuzz, pytest.mark.django_db(transaction=True)]


def _generate(schema_url: str, where: Path) -> None:
    (where / "openapi.json").write_bytes(requests.get(schema_url, timeout=10).content)
    bin_dir = Path(sys.executable).parent  # the generator formats its output with ruff, from the same venv
    subprocess.run(
        [bin_dir / "openapi-python-client", "generate", "--path", "openapi.json", "--meta", "none",
         "--output-path", "va_client"],
        cwd=where, check=True, capture_output=True, timeout=300,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
    )


def test_a_generated_client_works_against_a_live_server(org, write_key, tmp_path, monkeypatch):
    runtime = Runtime(org)
    for _ in range(3):
        call_id, _ = runtime.start()
        runtime.complete(call_id)
    with running_gunicorn(tmp_path / "gunicorn.log", WEBHOOK_ALLOW_LOCAL_URLS="true") as port:
        base = f"http://127.0.0.1:{port}"
        _generate(f"{base}/api/openapi.json", tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
        va = importlib.import_module("va_client")
        from va_client.api.calls import calls_list
        from va_client.api.contacts import contacts_create, contacts_list
        from va_client.api.identity import me
        from va_client.api.webhook_subscriptions import webhook_subscriptions_create
        from va_client.models import ContactInputRequest, EventTypeEnum, SubscriptionCreateInputRequest

        client = va.AuthenticatedClient(base_url=base, token=write_key[1], raise_on_unexpected_status=True)

        assert me.sync(client=client).data.org_name == org.name

        created = contacts_create.sync(client=client, idempotency_key="gen-1",
                                       body=ContactInputRequest(phone_number="+1 415 555 0177", name="Ada Lovelace"))
        assert not isinstance(created, va.models.Error), created.to_dict()
        assert created.data.phone_number == "+14155550177"
        found = contacts_list.sync(client=client, search="lovelace")
        assert [c.id for c in found.data] == [created.data.id]

        first = calls_list.sync(client=client, limit=2)
        assert len(first.data) == 2 and first.has_more
        second = calls_list.sync(client=client, limit=2, cursor=first.next_cursor)
        assert len(second.data) == 1 and not second.has_more
        assert len({str(c.id) for c in first.data + second.data}) == 3

        subscription = webhook_subscriptions_create.sync(client=client, body=SubscriptionCreateInputRequest(
            url=f"https://localhost:{port}/hooks", events=[EventTypeEnum.CALL_ENDED]))
        assert subscription.secret.startswith("whsec_")
        assert subscription.data.events == [EventTypeEnum.CALL_ENDED]
