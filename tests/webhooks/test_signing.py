import json

import pytest
from standardwebhooks import Webhook
from svix.webhooks import Webhook as SvixWebhook
from svix.webhooks import WebhookVerificationError

from webhooks import crypto
from webhooks.delivery import build_headers


def test_standard_webhooks_test_vector_signs_exactly():
    assert (
        crypto.sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                    b'{"test": 2432232314}')
        == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )


def test_secrets_are_whsec_base64_of_32_bytes_and_unique():
    import base64

    one, two = crypto.generate_secret(), crypto.generate_secret()
    assert one.startswith("whsec_") and one != two
    assert len(base64.b64decode(one.removeprefix("whsec_"))) == 32


def test_secrets_are_encrypted_at_rest_and_decrypt_back():
    secret = crypto.generate_secret()
    token = crypto.encrypt(secret)
    assert secret not in token and secret.removeprefix("whsec_") not in token
    assert crypto.decrypt(token) == secret


def test_headers_verify_with_standardwebhooks_and_svix_for_each_secret_during_a_grace_period():
    old, new = crypto.generate_secret(), crypto.generate_secret()
    body = json.dumps({"id": "evt_1", "data": {"x": "é"}}, ensure_ascii=False).encode()
    headers = build_headers(event_id="evt_1", body=body, secrets_=[new, old])
    assert headers["Content-Type"] == "application/json" and headers["User-Agent"].startswith("VoiceAgent")
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (new, old):
        assert Webhook(secret).verify(body, headers)["id"] == "evt_1"
        # svix's verify returns None and raises WebhookVerificationError on a bad signature.
        SvixWebhook(secret).verify(body, {k.replace("webhook", "svix"): v for k, v in headers.items()})
        SvixWebhook(secret).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        SvixWebhook(crypto.generate_secret()).verify(body, headers)
