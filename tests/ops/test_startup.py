"""Outside DEBUG the service refuses to start while anything that matters is misconfigured, and says everything
that is wrong in one message, never repeating a secret."""

import io
import runpy
import warnings

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

SETTINGS_FILE = str(django_settings.BASE_DIR / "voiceagent" / "settings.py")
STRONG = "Zq3-mT8_wL1xN5pR7vK2bY9cH4dJ6fG0sA"


def _start(monkeypatch, **env) -> dict:
    for name in ("DEBUG", "AGENT_RUNTIME_TOKEN", "AGENT_RUNTIME_TOKENS", "BEHIND_TLS_PROXY", "SECURE_SSL_REDIRECT",
                 "SECURE_HSTS_SECONDS", "WEBHOOK_ALLOW_LOCAL_URLS", "WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG", "METRICS_TOKEN",
                 "TRUSTED_PROXY_COUNT", "TRUSTED_PROXIES", "DATABASE_POOLING", "RECORDINGS_STORAGE_URL", "MEDIA_ROOT",
                 "CSP_MEDIA_SRC"):
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
    started = _start(monkeypatch, BEHIND_TLS_PROXY="true", SECURE_SSL_REDIRECT="true", SECURE_HSTS_SECONDS="31536000",
                     TRUSTED_PROXY_COUNT="1")
    assert started["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert (started["SECURE_SSL_REDIRECT"], started["SECURE_HSTS_SECONDS"]) == (True, 31536000)
    assert started["SECURE_REDIRECT_EXEMPT"] == [r"^healthz$", r"^readyz$"]
    assert "SECURE_PROXY_SSL_HEADER" not in _start(monkeypatch)


def test_local_webhook_receivers_outside_debug_refuse_to_start_unless_a_test_stack_says_so(monkeypatch):
    with pytest.raises(ImproperlyConfigured, match="WEBHOOK_ALLOW_LOCAL_URLS lets webhook deliveries reach"):
        _start(monkeypatch, WEBHOOK_ALLOW_LOCAL_URLS="true")
    assert _start(monkeypatch, WEBHOOK_ALLOW_LOCAL_URLS="true", WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG="1")[
        "WEBHOOK_ALLOW_LOCAL_URLS"] is True
    assert _start(monkeypatch, DEBUG="true", WEBHOOK_ALLOW_LOCAL_URLS="true")["WEBHOOK_ALLOW_LOCAL_URLS"] is True
    assert _start(monkeypatch, WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG="1")["WEBHOOK_ALLOW_LOCAL_URLS"] is False


def test_a_short_metrics_token_refuses_to_start_outside_debug(monkeypatch):
    short = STRONG[:31]
    with pytest.raises(ImproperlyConfigured, match="METRICS_TOKEN must be at least 32 characters") as refused:
        _start(monkeypatch, METRICS_TOKEN=short)
    assert short not in str(refused.value)
    assert _start(monkeypatch, METRICS_TOKEN=STRONG[:32])["METRICS_TOKEN"] == STRONG[:32]
    assert _start(monkeypatch, DEBUG="true", METRICS_TOKEN="dev")["METRICS_TOKEN"] == "dev"
    assert _start(monkeypatch)["METRICS_TOKEN"] == ""  # unset: /metrics is off


def test_a_tls_proxy_without_trusted_proxy_settings_warns(monkeypatch):
    with pytest.warns(UserWarning, match="BEHIND_TLS_PROXY is on but neither TRUSTED_PROXY_COUNT nor TRUSTED_PROXIES"):
        _start(monkeypatch, BEHIND_TLS_PROXY="true")
    for trusted in ({"TRUSTED_PROXY_COUNT": "1"}, {"TRUSTED_PROXIES": "10.0.0.0/8"}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _start(monkeypatch, BEHIND_TLS_PROXY="true", **trusted)
        assert not [w for w in caught if "BEHIND_TLS_PROXY" in str(w.message)]


def test_database_pooling_transaction_keeps_no_state_on_a_session_and_a_wrong_value_refuses_to_start(monkeypatch):
    direct = _start(monkeypatch)["DATABASES"]["default"]
    assert "DISABLE_SERVER_SIDE_CURSORS" not in direct and direct["OPTIONS"].get("prepare_threshold") is None
    pooled = _start(monkeypatch, DATABASE_POOLING="transaction")
    assert pooled["DATABASE_POOLING"] == "transaction"
    assert pooled["DATABASES"]["default"]["DISABLE_SERVER_SIDE_CURSORS"] is True
    assert "prepare_threshold" in pooled["DATABASES"]["default"]["OPTIONS"]
    assert pooled["DATABASES"]["default"]["OPTIONS"]["prepare_threshold"] is None  # psycopg prepares nothing
    for wrong in ("transactions", "statement", "yes"):
        with pytest.raises(ImproperlyConfigured, match="DATABASE_POOLING must be"):
            _start(monkeypatch, DATABASE_POOLING=wrong, DEBUG="true")


S3 = "s3://va-recordings?endpoint_url=http://127.0.0.1:9000&region=eu-west-1"


def test_recordings_storage_url_puts_recordings_in_s3_and_its_server_in_the_pages_media_src(monkeypatch):
    started = _start(monkeypatch, RECORDINGS_STORAGE_URL=S3)
    storage = started["STORAGES"]["default"]
    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"
    assert {key: storage["OPTIONS"][key] for key in ("bucket_name", "endpoint_url", "region_name", "addressing_style",
                                                     "querystring_expire")} == {
        "bucket_name": "va-recordings", "endpoint_url": "http://127.0.0.1:9000", "region_name": "eu-west-1",
        "addressing_style": "path", "querystring_expire": 3600}
    assert "media-src 'self' http://127.0.0.1:9000;" in started["CONTENT_SECURITY_POLICY"]
    aws = _start(monkeypatch, RECORDINGS_STORAGE_URL="s3://va-recordings?region=us-east-1")["STORAGES"]["default"]
    assert (aws["OPTIONS"]["endpoint_url"], aws["OPTIONS"]["addressing_style"]) == (None, None)


def test_recordings_on_the_local_disk_warn_outside_debug_that_only_this_node_plays_them(monkeypatch, tmp_path):
    with pytest.warns(UserWarning, match="playback works only on the node that stored them"):
        started = _start(monkeypatch, MEDIA_ROOT=str(tmp_path))
    assert started["STORAGES"]["default"]["OPTIONS"]["location"] == tmp_path
    for quiet in ({"DEBUG": "true"}, {"RECORDINGS_STORAGE_URL": S3}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _start(monkeypatch, **quiet)
        assert not [w for w in caught if "RECORDINGS_STORAGE_URL" in str(w.message)]


@pytest.mark.parametrize("url", [
    "https://va-recordings.s3.amazonaws.com",
    "s3://",
    "s3://Bad_Bucket",
    "s3://AKIAEXAMPLE:secret@va-recordings",
    "s3://va-recordings/prefix",
    "s3://va-recordings?endpoint=http://127.0.0.1:9000",
    "s3://va-recordings?endpoint_url=127.0.0.1:9000",
    "s3://va-recordings?region=eu-west-1&region=us-east-1",
    "s3://va-recordings?region=",
    "s3://va-recordings?addressing_style=sideways",
])
def test_a_recordings_storage_url_that_cannot_be_parsed_refuses_to_start_naming_the_setting(monkeypatch, url):
    with pytest.raises(ImproperlyConfigured, match="RECORDINGS_STORAGE_URL cannot be parsed") as refused:
        _start(monkeypatch, RECORDINGS_STORAGE_URL=url, DEBUG="true")
    assert "secret" not in str(refused.value)


@pytest.mark.django_db
def test_seed_demo_refuses_its_public_password_outside_debug(settings):
    from devtools.management.commands.seed_demo import DEMO_EMAIL

    settings.DEBUG = False
    with pytest.raises(CommandError, match="seed_demo runs only with DEBUG on"):
        call_command("seed_demo", calls=0)
    assert not get_user_model().objects.filter(username=DEMO_EMAIL).exists()
    settings.DEBUG = True
    call_command("seed_demo", calls=0, stdout=io.StringIO())
    assert get_user_model().objects.filter(username=DEMO_EMAIL).exists()


@pytest.mark.parametrize("sentinels", ["127.0.0.1", "127.0.0.1:26379,", "host:port", "a:1;b:2", "h:70000", "::1:5"])
def test_a_sentinel_list_that_cannot_be_parsed_refuses_to_start_naming_the_setting(monkeypatch, sentinels):
    with pytest.raises(ImproperlyConfigured, match="^REDIS_SENTINELS cannot be parsed"):
        _start(monkeypatch, DEBUG="true", REDIS_SENTINELS=sentinels, REDIS_SENTINEL_MASTER="main")
    with pytest.raises(ImproperlyConfigured, match="REDIS_SENTINEL_MASTER"):
        _start(monkeypatch, REDIS_SENTINELS="127.0.0.1:26379", REDIS_SENTINEL_MASTER="")


def test_a_sentinel_list_puts_the_cache_and_the_broker_behind_sentinel(monkeypatch):
    monkeypatch.delenv("REDIS_URL", raising=False)  # not needed with Sentinel
    started = _start(monkeypatch, REDIS_SENTINELS="10.0.0.5:26379, sentinel-b:26380,[fd00::7]:26381",
                     REDIS_SENTINEL_MASTER="main")
    cache = started["CACHES"]["default"]
    assert cache["BACKEND"] == "voiceagent.redis_sentinel.SentinelRedisCache"
    assert cache["OPTIONS"]["sentinels"] == [("10.0.0.5", 26379), ("sentinel-b", 26380), ("fd00::7", 26381)]
    assert cache["OPTIONS"]["master"] == "main"
    assert started["CELERY_BROKER_URL"] == (
        "sentinel://10.0.0.5:26379/0;sentinel://sentinel-b:26380/0;sentinel://[fd00::7]:26381/0"
    )
    assert started["CELERY_BROKER_TRANSPORT_OPTIONS"]["master_name"] == "main"


def test_hsts_is_on_for_a_year_outside_debug_with_an_opt_out(monkeypatch):
    assert _start(monkeypatch)["SECURE_HSTS_SECONDS"] == 31536000
    assert _start(monkeypatch, SECURE_HSTS_SECONDS="0")["SECURE_HSTS_SECONDS"] == 0  # the documented opt-out
    assert _start(monkeypatch, DEBUG="true")["SECURE_HSTS_SECONDS"] == 0  # make run on plain http://127.0.0.1


@pytest.mark.django_db
def test_an_https_answer_carries_hsts_and_a_plain_http_one_does_not(client):
    assert client.get("/login/", secure=True)["Strict-Transport-Security"] == "max-age=31536000"
    assert "Strict-Transport-Security" not in client.get("/login/")


def test_the_similarity_and_numeric_password_validators_are_on():
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    user = get_user_model()(username="maria.lopez@example.com", email="maria.lopez@example.com")
    with pytest.raises(ValidationError, match="too similar to the"):
        validate_password("maria.lopez@example", user)
    with pytest.raises(ValidationError, match="entirely numeric"):
        validate_password("80451739261847", user)
    validate_password("a-long-unusual-passphrase", user)
