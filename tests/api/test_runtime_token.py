"""The agent runtime's token: outside DEBUG a weak one refuses to start; AGENT_RUNTIME_TOKENS adds tokens accepted
besides AGENT_RUNTIME_TOKEN, so a rotation overlaps; every accepted token is compared, in constant time."""

import runpy

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from rest_framework.test import APIClient

from api.runtime import authentication

STRONG = "Zq3-mT8_wL1xN5pR7vK2bY9cH4dJ6fG0sA"  # 34 characters, as secrets.token_urlsafe gives them
SETTINGS_FILE = str(django_settings.BASE_DIR / "voiceagent" / "settings.py")


def _start(monkeypatch, **env) -> dict:
    """The settings module run afresh with `env` (what a process start reads), outside DEBUG unless set."""
    monkeypatch.delenv("DEBUG", raising=False)
    monkeypatch.delenv("AGENT_RUNTIME_TOKEN", raising=False)
    monkeypatch.delenv("AGENT_RUNTIME_TOKENS", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(SETTINGS_FILE)


@pytest.mark.parametrize(
    "env",
    [
        {"AGENT_RUNTIME_TOKEN": "hunter2"},
        {"AGENT_RUNTIME_TOKEN": "x" * 64},  # long but one character
        {"AGENT_RUNTIME_TOKEN": STRONG[:31]},
        {"AGENT_RUNTIME_TOKEN": STRONG[:20] + " " + STRONG[20:]},
        {"AGENT_RUNTIME_TOKEN": STRONG, "AGENT_RUNTIME_TOKENS": f"{STRONG[::-1]},short-old-token"},
    ],
    ids=["short", "one-character", "31-characters", "whitespace", "a-weak-one-in-the-list"],
)
def test_a_weak_runtime_token_refuses_to_start_outside_debug(monkeypatch, env):
    with pytest.raises(ImproperlyConfigured, match="AGENT_RUNTIME_TOKEN") as refused:
        _start(monkeypatch, **env)
    for token in ",".join(env.values()).split(","):
        assert token not in str(refused.value)  # the message never repeats a secret
    assert _start(monkeypatch, DEBUG="true", **env)["DEBUG"] is True  # development may use anything


def test_strong_tokens_or_none_start(monkeypatch):
    assert _start(monkeypatch, AGENT_RUNTIME_TOKEN=STRONG)["AGENT_RUNTIME_TOKEN"] == STRONG
    started = _start(monkeypatch, AGENT_RUNTIME_TOKEN=STRONG, AGENT_RUNTIME_TOKENS=f"{STRONG[::-1]},{STRONG[1:]}0")
    assert started["AGENT_RUNTIME_TOKENS"] == [STRONG[::-1], f"{STRONG[1:]}0"]
    assert _start(monkeypatch)["AGENT_RUNTIME_TOKEN"] == ""  # no runtime: its API refuses everything


def _knowledge(org, token):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client.get(f"/internal/agent/v1/orgs/{org.id}/knowledge").status_code


def test_a_rotation_accepts_the_old_and_the_new_token_together(org, settings):
    old, new = settings.AGENT_RUNTIME_TOKEN, STRONG
    settings.AGENT_RUNTIME_TOKENS = [new]
    assert _knowledge(org, old) == _knowledge(org, new) == 200
    assert _knowledge(org, new[:-1]) == _knowledge(org, "") == 401
    settings.AGENT_RUNTIME_TOKEN, settings.AGENT_RUNTIME_TOKENS = new, []  # the rotation is done
    assert _knowledge(org, new) == 200 and _knowledge(org, old) == 401


def test_every_accepted_token_is_compared_in_constant_time(org, settings, monkeypatch):
    settings.AGENT_RUNTIME_TOKENS = [STRONG, STRONG[::-1]]
    compared = []

    def compare_digest(a, b):
        compared.append((len(a), len(b)))
        return real(a, b)

    real = authentication.hmac.compare_digest
    monkeypatch.setattr(authentication.hmac, "compare_digest", compare_digest)
    for presented in ("short", settings.AGENT_RUNTIME_TOKEN):  # a wrong one, then the first accepted one
        compared.clear()
        _knowledge(org, presented)
        # No early exit on a match, and no length to learn: one comparison per token, of equal-length digests.
        assert len(compared) == 3 and len({length for pair in compared for length in pair}) == 1
