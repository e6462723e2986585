"""Settings → Webhooks: the list with health, create (secret shown once), edit, enable/disable, rotate (secret
shown once), delete (confirmed), the delivery log and redeliver. Members read; every write is admin-only."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from orgs.models import Location
from tests.support.accounts import session_rows
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit, subscription_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fake_dns")]

URL = "https://hooks.example.com/voice"
ALL_EVENTS = ["call.ended", "call_order.status_changed"]


@pytest.fixture
def subscription(org):
    sub, _ = subscription_create(org=org, url=URL, events=ALL_EVENTS, description="Order sync")
    return sub


@pytest.fixture
def failed_delivery(org, subscription):
    emit(org=org, type="call.ended", data={"call_id": "c1"})
    delivery = Delivery.objects.get(subscription=subscription)
    now = timezone.now()
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempt_count=2, last_status_code=503,
                                                   last_error="HTTP 503", next_attempt_at=None, last_attempt_at=now)
    for number in (1, 2):
        DeliveryAttempt.objects.create(organization=org, delivery=delivery, number=number, status_code=503,
                                       duration_ms=40 + number, response_body=f"upstream down {number}",
                                       error="HTTP 503")
    Subscription.objects.filter(pk=subscription.pk).update(failing_since=now - timedelta(hours=2))
    delivery.refresh_from_db()
    return delivery


def paths(sub, delivery=None):
    base = f"/settings/webhooks/{sub.pk}"
    result = {
        "detail": f"{base}/", "edit": f"{base}/edit/", "rotate": f"{base}/rotate/", "delete": f"{base}/delete/",
        "enabled": f"{base}/enabled/",
    }
    if delivery is not None:
        result["redeliver"] = f"{base}/deliveries/{delivery.pk}/redeliver/"
    return result


def create(client, **data):
    return client.post("/settings/webhooks/new/", {"url": URL, "events": ALL_EVENTS, "description": "", **data})


def test_anonymous_visitors_are_sent_to_log_in(client, subscription, failed_delivery):
    """Log-in comes before everything, the HTTP method check included: an anonymous GET of a POST-only path
    (enabled, redeliver) and of the GET-only secret page is the same redirect to log in, never a 405."""
    before = Subscription.objects.values().get(pk=subscription.pk)
    every_path = ["/settings/webhooks/", "/settings/webhooks/new/", "/settings/webhooks/secret/",
                  *paths(subscription, failed_delivery).values()]
    for method in ("get", "post"):
        for path in every_path:
            response = getattr(client, method)(path)
            assert (response.status_code, response["Location"]) == (302, f"/login/?next={path}"), (method, path)
    assert create(client).status_code == 302 and Subscription.objects.count() == 1
    assert Subscription.objects.values().get(pk=subscription.pk) == before
    assert Delivery.objects.get(pk=failed_delivery.pk).attempt_count == 2


def test_members_read_the_list_and_the_log_without_write_controls(member_client, subscription, failed_delivery):
    listing = member_client.get("/settings/webhooks/")
    body = listing.content.decode()
    # A member sees where events go, not the path (issue 35 item 11: a receiver's path often carries a token).
    assert listing.status_code == 200 and "https://hooks.example.com/…" in body and URL not in body
    assert "/settings/webhooks/new/" not in body and 'data-testid="disable-webhook"' not in body
    detail = member_client.get(paths(subscription)["detail"])
    body = detail.content.decode()
    assert detail.status_code == 200 and "upstream down 1" in body
    for testid in ("edit-webhook", "rotate-webhook", "delete-webhook", "redeliver", "disable-webhook"):
        assert f'data-testid="{testid}"' not in body


TOKEN_URL = "https://hooks.example.com/in/tok_s3cr3t?key=s3cr3t"


def test_only_admins_see_a_webhook_url_beyond_its_host(admin_client, member_client, org):
    """Issue 35 item 11: the list, the log and the events page show members the scheme and host; admins, who
    manage the endpoint, the whole URL."""
    sub, _ = subscription_create(org=org, url=TOKEN_URL, events=ALL_EVENTS)
    emit(org=org, type="call.ended", data={"call_id": "c1"})
    pages = ["/settings/webhooks/", paths(sub)["detail"], "/events/"]
    for path in pages:
        body = member_client.get(path).content.decode()
        assert "s3cr3t" not in body and "https://hooks.example.com/…" in body, path
        assert TOKEN_URL.replace("&", "&amp;") in admin_client.get(path).content.decode(), path


def test_members_get_403_on_every_write_and_nothing_changes(member_client, subscription, failed_delivery):
    before = Subscription.objects.values().get(pk=subscription.pk)
    p = paths(subscription, failed_delivery)
    assert member_client.get("/settings/webhooks/new/").status_code == 403
    assert create(member_client).status_code == 403
    for name in ("edit", "rotate", "delete"):
        assert member_client.get(p[name]).status_code == 403
    assert member_client.post(p["edit"], {"url": URL, "events": ["call.ended"]}).status_code == 403
    assert member_client.post(p["rotate"], {"grace_period_seconds": "0"}).status_code == 403
    assert member_client.post(p["delete"]).status_code == 403
    assert member_client.post(p["enabled"], {"enabled": "0"}).status_code == 403
    assert member_client.post(p["redeliver"]).status_code == 403
    assert Subscription.objects.values().get(pk=subscription.pk) == before
    failed_delivery.refresh_from_db()
    assert failed_delivery.status == "failed"


def test_another_orgs_subscription_and_delivery_are_404(outsider_client, other_org, subscription, failed_delivery):
    for name, path in paths(subscription, failed_delivery).items():
        response = outsider_client.post(path, {"enabled": "0"}) if name in ("enabled", "redeliver") else \
            outsider_client.get(path)
        assert response.status_code == 404, name
    assert outsider_client.post(paths(subscription)["delete"]).status_code == 404
    assert Subscription.objects.get(pk=subscription.pk).enabled
    assert URL not in outsider_client.get("/settings/webhooks/").content.decode()
    # Their own subscription with our delivery id: still 404 (a delivery is looked up through its subscription).
    theirs, _ = subscription_create(org=other_org, url=URL, events=ALL_EVENTS)
    response = outsider_client.post(f"/settings/webhooks/{theirs.pk}/deliveries/{failed_delivery.pk}/redeliver/")
    assert response.status_code == 404
    assert outsider_client.get(f"/settings/webhooks/{uuid.uuid4()}/").status_code == 404


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"url": "http://hooks.example.com/voice"}, "url", "The URL must use https://."),
        ({"url": "not a url"}, "url", "Enter a valid https:// URL."),
        ({"url": "https://internal.example.com/x"}, "url", None),
        ({"url": "https://user:pw@hooks.example.com/x"}, "url", "The URL must not contain credentials."),
        ({"url": "https://hooks.example.com/" + "a" * 2048}, "url", None),
        ({"events": []}, "events", "Choose at least one event type."),
        ({"events": ["call.ended", "no.such_event"]}, "events", None),
    ],
)
def test_bad_input_is_refused_inline_without_writing(admin_client, data, field, message):
    response = create(admin_client, **data)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert field in errors
    if message:
        assert errors[field] == [message]
    assert f'data-testid="error-{field}"' in response.content.decode()
    assert Subscription.objects.count() == 0


def test_create_shows_the_secret_once(admin_client, org):
    response = create(admin_client, description="CRM")
    assert response.status_code == 302 and response["Location"] == "/settings/webhooks/secret/"
    sub = Subscription.objects.get(organization=org)
    assert (sub.url, sub.events, sub.description, sub.enabled) == (URL, ALL_EVENTS, "CRM", True)
    shown = admin_client.get("/settings/webhooks/secret/")
    body = shown.content.decode()
    assert shown.status_code == 200 and 'data-testid="webhook-secret-plaintext"' in body
    assert sub.secret in body and sub.secret.startswith("whsec_")
    assert 'data-copy-target="new-secret"' in body
    assert "no-store" in shown["Cache-Control"]
    again = admin_client.get("/settings/webhooks/secret/")
    assert again.status_code == 302 and again["Location"] == "/settings/webhooks/"
    for path in ["/settings/webhooks/", f"/settings/webhooks/{sub.pk}/"]:
        page = admin_client.get(path).content.decode()
        assert sub.secret not in page
    assert sub.secret_preview in admin_client.get(f"/settings/webhooks/{sub.pk}/").content.decode()


def test_the_session_store_never_holds_a_webhook_secret(admin_client, org, subscription):
    """Created or rotated, the secret waits in the session sealed; the DB session rows never hold it."""
    create(admin_client, url=URL + "/new")
    while_pending = session_rows()
    created = Subscription.objects.get(organization=org, url=URL + "/new")
    assert created.secret in admin_client.get("/settings/webhooks/secret/").content.decode()
    admin_client.post(paths(subscription)["rotate"], {"grace_period_seconds": "0"})
    while_pending += session_rows()
    subscription.refresh_from_db()
    assert subscription.secret in admin_client.get("/settings/webhooks/secret/").content.decode()
    assert any("dashboard.once" in row for row in while_pending)
    for secret in (created.secret, subscription.secret):
        for row in [*while_pending, *session_rows()]:
            assert secret.removeprefix("whsec_") not in row


def test_a_secret_not_viewed_at_once_is_dropped_by_the_next_page(admin_client, org):
    create(admin_client)
    admin_client.get("/settings/webhooks/")
    assert admin_client.get("/settings/webhooks/secret/").status_code == 302


def test_edit_changes_fields_and_refuses_bad_urls(admin_client, subscription):
    p = paths(subscription)
    form = admin_client.get(p["edit"])
    assert form.status_code == 200 and form.context["form"]["events"].value() == ALL_EVENTS
    bad = admin_client.post(p["edit"], {"url": "http://hooks.example.com/x", "events": ["call.ended"]})
    assert bad.status_code == 200 and bad.context["form"].errors["url"] == ["The URL must use https://."]
    assert Subscription.objects.get(pk=subscription.pk).events == ALL_EVENTS
    saved = admin_client.post(p["edit"], {"url": URL + "/v2", "events": ["contact.created"], "description": "New"})
    assert saved.status_code == 302 and saved["Location"] == p["detail"]
    subscription.refresh_from_db()
    assert (subscription.url, subscription.events, subscription.description) == (URL + "/v2", ["contact.created"],
                                                                                 "New")


def test_disable_shows_the_reason_and_enable_clears_it(admin_client, subscription):
    p = paths(subscription)
    assert admin_client.post(p["enabled"], {"enabled": "0"}).status_code == 302
    subscription.refresh_from_db()
    assert not subscription.enabled and subscription.disabled_reason == "Disabled by a user."
    body = admin_client.get("/settings/webhooks/").content.decode()
    assert 'data-testid="webhook-disabled-reason">Disabled by a user.' in body
    assert 'data-testid="enable-webhook"' in body
    response = admin_client.post(p["enabled"], {"enabled": "1", "next": "detail"})
    assert response["Location"] == p["detail"]
    subscription.refresh_from_db()
    assert subscription.enabled and subscription.disabled_reason == ""


def test_an_auto_disabled_subscription_says_why(admin_client, subscription):
    reason = "Every delivery failed for 5 days."
    Subscription.objects.filter(pk=subscription.pk).update(enabled=False, disabled_reason=reason,
                                                           disabled_at=timezone.now())
    assert reason in admin_client.get("/settings/webhooks/").content.decode()
    assert reason in admin_client.get(paths(subscription)["detail"]).content.decode()


def test_rotate_shows_the_new_secret_once_with_an_optional_grace_period(admin_client, subscription):
    old = subscription.secret
    p = paths(subscription)
    assert admin_client.get(p["rotate"]).status_code == 200
    bad = admin_client.post(p["rotate"], {"grace_period_seconds": "99999"})
    assert bad.status_code == 200 and bad.context["form"].errors["grace_period_seconds"]
    assert Subscription.objects.get(pk=subscription.pk).secret == old
    response = admin_client.post(p["rotate"], {"grace_period_seconds": "3600"})
    assert response["Location"] == "/settings/webhooks/secret/"
    subscription.refresh_from_db()
    assert subscription.secret != old
    assert subscription.signing_secrets(timezone.now()) == [subscription.secret, old]
    body = admin_client.get("/settings/webhooks/secret/").content.decode()
    assert subscription.secret in body and "Your new signing secret" in body and old not in body
    assert admin_client.get("/settings/webhooks/secret/").status_code == 302
    admin_client.post(p["rotate"], {"grace_period_seconds": "0"})
    subscription.refresh_from_db()
    assert len(subscription.signing_secrets(timezone.now())) == 1


def test_delete_asks_first(admin_client, subscription, failed_delivery):
    p = paths(subscription)
    confirm = admin_client.get(p["delete"])
    assert confirm.status_code == 200 and 'data-testid="confirm-delete"' in confirm.content.decode()
    assert Subscription.objects.filter(pk=subscription.pk).exists()
    assert admin_client.post(p["delete"])["Location"] == "/settings/webhooks/"
    assert not Subscription.objects.filter(pk=subscription.pk).exists()
    assert not Delivery.objects.filter(pk=failed_delivery.pk).exists()


def test_the_list_and_log_show_health_attempts_and_redeliver(admin_client, subscription, failed_delivery):
    listing = admin_client.get("/settings/webhooks/").content.decode()
    assert "2 in a row" in listing and "Failing" in listing
    detail = admin_client.get(paths(subscription)["detail"])
    body = detail.content.decode()
    assert detail.context["health"].failure_streak == 2
    assert "call.ended" in body and failed_delivery.event_id in body
    assert body.count('data-testid="attempt"') == 2
    assert "HTTP 503" in body and "41 ms" in body and "upstream down 2" in body
    response = admin_client.post(paths(subscription, failed_delivery)["redeliver"])
    assert response.status_code == 302
    failed_delivery.refresh_from_db()
    assert (failed_delivery.status, failed_delivery.next_trigger) == ("pending", "manual")
    assert "queued for redelivery" in admin_client.get(response["Location"]).content.decode()


def test_redeliver_while_an_attempt_is_in_flight_says_so(admin_client, subscription, failed_delivery):
    Delivery.objects.filter(pk=failed_delivery.pk).update(claimed_until=timezone.now() + timedelta(seconds=30))
    response = admin_client.post(paths(subscription, failed_delivery)["redeliver"], follow=True)
    assert "An attempt of this delivery is in progress" in response.content.decode()
    failed_delivery.refresh_from_db()
    assert failed_delivery.status == "failed"


def test_enabled_and_redeliver_are_post_only(admin_client, subscription, failed_delivery):
    p = paths(subscription, failed_delivery)
    assert admin_client.get(p["enabled"]).status_code == 405
    assert admin_client.get(p["redeliver"]).status_code == 405


def test_the_nav_shows_webhooks_and_shows_meetings_only_with_the_product(admin_client, member_client, org):
    body = admin_client.get("/settings/webhooks/").content.decode()
    assert 'href="/settings/webhooks/" class="is-current" aria-current="page">Webhooks<' in body
    assert 'href="/meetings/"' not in body and 'href="/settings/webhooks/"' in member_client.get("/").content.decode()
    org.meetings_enabled = True
    org.save(update_fields=["meetings_enabled"])
    for client in (admin_client, member_client):
        assert 'href="/meetings/"' in client.get("/contacts/").content.decode()
    meetings = admin_client.get("/meetings/").content.decode()
    assert 'href="/meetings/" class="is-current" aria-current="page">Meetings<' in meetings


# --- locations (issue 28): a subscription limited to some of the organization's locations ------------------------


def _places(org):
    return (Location.objects.create(organization=org, name="Castro", timezone="UTC"),
            Location.objects.create(organization=org, name="Mission", timezone="UTC"))


def test_the_form_limits_a_subscription_to_locations_and_none_ticked_is_the_whole_org(admin_client, org):
    castro, mission = _places(org)
    form = admin_client.get("/settings/webhooks/new/").content.decode()
    assert 'name="location_ids"' in form and "Castro" in form and "Mission" in form
    assert create(admin_client, url=URL + "/mission", location_ids=[str(mission.pk)]).status_code == 302
    assert create(admin_client, url=URL + "/all").status_code == 302
    limited, whole = (Subscription.objects.get(url=URL + path) for path in ("/mission", "/all"))
    assert (limited.location_ids, whole.location_ids) == ([mission.pk], None)
    shown = admin_client.get(f"/settings/webhooks/{limited.pk}/").content.decode()
    assert '<dd data-testid="webhook-locations">Mission</dd>' in shown
    shown = admin_client.get(f"/settings/webhooks/{whole.pk}/").content.decode()
    assert '<dd data-testid="webhook-locations">All (the whole organization)</dd>' in shown

    edit = paths(limited)["edit"]
    assert admin_client.get(edit).context["form"]["location_ids"].value() == [str(mission.pk)]
    saved = admin_client.post(edit, {"url": limited.url, "events": limited.events,
                                     "location_ids": [str(castro.pk), str(mission.pk)]})
    assert saved.status_code == 302
    assert Subscription.objects.get(pk=limited.pk).location_ids == [castro.pk, mission.pk]
    admin_client.post(edit, {"url": limited.url, "events": limited.events})
    assert Subscription.objects.get(pk=limited.pk).location_ids is None


def test_another_orgs_location_is_refused_inline(admin_client, org, other_org):
    _places(org)
    theirs, _ = _places(other_org)
    response = create(admin_client, location_ids=[str(theirs.pk)])
    assert response.status_code == 200
    assert response.context["form"].errors["location_ids"]
    assert 'data-testid="error-location_ids"' in response.content.decode()
    assert not Subscription.objects.exists()


def test_an_org_without_locations_has_no_location_choice(admin_client):
    assert 'name="location_ids"' not in admin_client.get("/settings/webhooks/new/").content.decode()


def test_a_location_a_subscription_is_limited_to_is_not_deleted(admin_client, org):
    _, mission = _places(org)
    create(admin_client, location_ids=[str(mission.pk)])
    page = admin_client.post(f"/locations/{mission.pk}/delete/", follow=True).content.decode()
    assert (f"Webhook subscriptions are limited to this location: {URL}. Delete them or change their locations "
            "first.") in page
    assert Location.objects.filter(pk=mission.pk).exists()
