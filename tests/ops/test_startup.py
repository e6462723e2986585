"""Outside DEBUG the service refuses to start while anything that matters is misconfigured, and says everything
that is wrong in one message, never repeating a secret."""

import runpy

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

SETTINGS_FILE = str(django_settings.BASE_DIR / "voiceagent" / "settings.py")
STRONG = "Zq3-mT8_wL1xN5pR7vK2bY9cH4dJ6fG0sA"


def _start(monkeypatch, **env) -> dict:
    for name in ("DEBUG", "AGENT_RUNTIME_TOKEN", "AGENT_RUNTIME_TOKENS", "BEHIND_TLS_PROXY", "SECURE_SSL_REDIRECT",
                 "SECURE_HSTS_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(SETTINGS_FILE)


def test_every_problem_is_listed_in_one_refusal(monkeypatch):
    with pytest.raises(ImproperlyConfigured) as refused:
        _start(monkeypatch, SECRET_KEY="", EMAIL_URL="consolemail://", AGENT_RUNTIME_TOKEN="hunter2")
    message = str(refused.value)
    assert message.startswith("The service cannot start outside DEBUG until this is fixed:")
    assert message.count("\n- ") == 3
    for problem in ("AGENT_RUNTIME_TOKEN", "SECRET_KEY and FIELD_ENCRYPTION_KEY", "EMAIL_URL must name a mail server"):
        assert problem in message
    assert "hunter2" not in message


@pytest.mark.parametrize("url", ["consolemail://", "filemail:///tmp/mail", "memorymail://", "dummymail://"])
def test_mail_that_goes_nowhere_real_refuses_to_start(monkeypatch, url):
    with pytest.raises(ImproperlyConfigured, match="EMAIL_URL"):
        _start(monkeypatch, EMAIL_URL=url)


def test_a_complete_configuration_starts_and_debug_may_use_the_console(monkeypatch):
    started = _start(monkeypatch, EMAIL_URL="smtp+tls://user:pw@mail.example.com:587", AGENT_RUNTIME_TOKEN=STRONG)
    assert started["EMAIL_BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert _start(monkeypatch, DEBUG="true", EMAIL_URL="consolemail://")["DEBUG"] is True


def test_behind_a_tls_proxy(monkeypatch):
    started = _start(monkeypatch, BEHIND_TLS_PROXY="true", SECURE_SSL_REDIRECT="true", SECURE_HSTS_SECONDS="31536000")
    assert started["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert (started["SECURE_SSL_REDIRECT"], started["SECURE_HSTS_SECONDS"]) == (True, 31536000)
    assert started["SECURE_REDIRECT_EXEMPT"] == [r"^healthz$", r"^readyz$"]
    assert "SECURE_PROXY_SSL_HEADER" not in _start(monkeypatch)
