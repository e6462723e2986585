"""Who is e-mailed about what, in process: the services write one outbox row per address in their own
transaction, and the send task's body (run here directly, as a worker would) mails it through Django's
locmem backend. The real worker, the broker and the on-commit hop are covered in test_worker.py."""

import pytest
from django.core import mail
from django.db import transaction

from calls.models import CallbackRequest, Message
from knowledge.services import escalation_rule_create
from notifications.models import EmailNotification
from notifications.sender import send_notification
from notifications.services import recipient_create
from notifications.tasks import publisher
from tests.support.mail import send_pending

pytestmark = pytest.mark.django_db

CALLBACK = {"requested_window": "afternoon", "reason": "Question about a <b>catering</b> order & prices",
            "callback_number": "+14155550199"}


def request_callback(runtime, **data):
    call_id, _ = runtime.start()
    response = runtime.event(call_id, type="callback_requested", label="Requested a callback",
                             data={**CALLBACK, **data})
    assert response.status_code == 201, response.content
    return runtime.call(call_id)


def complete_with_messages(runtime, messages, classification="real_engagement"):
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, classification=classification, outcome="message", messages=messages)
    assert response.status_code in (200, 201), response.content
    return runtime.call(call_id)


def sent_to() -> list[str]:
    return sorted(address for m in mail.outbox for address in m.to)


def test_a_callback_request_mails_each_callback_recipient_once_with_the_call_link(
    runtime, recipients, other_org_recipient, settings
):
    call = request_callback(runtime)
    assert send_pending() == {"frontdesk@acme.example": "sent", "maria@acme.example": "sent"}
    assert sent_to() == ["frontdesk@acme.example", "maria@acme.example"]
    message = mail.outbox[0]
    link = f"{settings.DASHBOARD_URL}/calls/{call.id}"
    html = message.alternatives[0][0]
    assert message.subject == "Callback requested: Unknown caller, +14155550199"
    for needle in ["+14155550199", "Afternoon", "Question about a <b>catering</b> order & prices", link]:
        assert needle in message.body, needle
    assert "Question about a &lt;b&gt;catering&lt;/b&gt; order &amp; prices" in html  # caller words never markup
    assert f'href="{link}"' in html and "Afternoon" in html and "+14155550199" in html
    assert message.extra_headers["Auto-Submitted"] == "auto-generated"


def test_a_second_run_of_the_task_sends_nothing_more(runtime, recipients):
    request_callback(runtime)
    send_pending()
    rows = list(EmailNotification.objects.all())
    assert {send_notification(row.pk) for row in rows} == {"skipped"}
    assert len(mail.outbox) == 2
    assert {(r.status, r.attempts) for r in EmailNotification.objects.all()} == {("sent", 1)}


def test_the_requested_team_member_and_a_custom_window_are_in_the_mail(runtime, recipients, sam):
    request_callback(runtime, requested_window="custom", custom_window="after 6 pm",
                     requested_team_member_id=str(sam.id))
    send_pending()
    assert sent_to() == ["frontdesk@acme.example", "maria@acme.example", "sam@acme.example"]
    assert all("after 6 pm" in m.body and "Sam Chen" in m.body for m in mail.outbox)


def test_a_message_for_a_team_member_reaches_that_member_and_the_message_recipients(runtime, recipients, sam):
    complete_with_messages(runtime, [{"message": "Please confirm Friday's delivery.",
                                      "for_team_member_id": str(sam.id), "caller_name": "Jordan Miles"}])
    send_pending()
    assert sent_to() == ["frontdesk@acme.example", "sam@acme.example"]  # Sam is not a listed recipient
    [to_sam] = [m for m in mail.outbox if m.to == ["sam@acme.example"]]
    assert to_sam.subject == "Message for Sam Chen from Jordan Miles"
    assert "Please confirm Friday's delivery." in to_sam.body and "/calls/" in to_sam.body


def test_a_member_who_is_also_a_listed_recipient_gets_one_email(runtime, org, admin, maria):
    recipient_create(org=org, by=admin, team_member=maria, messages=True)
    complete_with_messages(runtime, [{"message": "Call me back", "for_team_member_id": str(maria.id)}])
    send_pending()
    assert sent_to() == ["maria@acme.example"]


def test_unscorable_calls_send_no_message_email(runtime, recipients, sam):
    for classification in ["robocall", "automated_dialer", "wrong_number_hangup"]:
        complete_with_messages(runtime, [{"message": "You won a cruise", "for_team_member_id": str(sam.id)}],
                               classification=classification)
    assert Message.objects.count() == 3  # recorded, but neither announced (no event) nor mailed
    assert not EmailNotification.objects.exists()
    assert send_pending() == {} and mail.outbox == []


def test_escalations_mail_the_escalation_recipients_and_the_member_routed_to(runtime, org, recipients, sam):
    rule = escalation_rule_create(org=org, name="Allergy question", destination_type="team_member",
                                  destination_team_member=sam, keywords=["manager"])
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="escalation_triggered", label="Asked a chef", data={
        "rule_id": str(rule.id), "triggered_by": "keyword", "context": "Severe nut allergy"}).status_code == 201
    send_pending()
    assert sent_to() == ["maria@acme.example", "sam@acme.example"]
    assert all("Severe nut allergy" in m.body and "Allergy question" in m.subject for m in mail.outbox)


def test_recipients_of_another_org_get_nothing(runtime, other_runtime_org_setup):
    other_runtime, their_recipient = other_runtime_org_setup
    request_callback(runtime)
    complete_with_messages(runtime, [{"message": "Hello"}])
    send_pending()
    assert mail.outbox == [] and not EmailNotification.objects.exists()  # our org has no recipients
    request_callback(other_runtime)
    send_pending()
    assert sent_to() == [their_recipient.email]


@pytest.fixture
def other_runtime_org_setup(other_org, other_org_recipient):
    from tests.support.runtime import Runtime

    return Runtime(other_org), other_org_recipient


def test_a_rolled_back_callback_request_writes_and_sends_nothing(runtime, recipients,
                                                                  django_capture_on_commit_callbacks):
    from calls.services.tool_events import tool_event_record

    call_id, _ = runtime.start()
    with django_capture_on_commit_callbacks() as callbacks, pytest.raises(RuntimeError), transaction.atomic():
        tool_event_record(org=runtime.org, runtime_call_id=call_id, runtime_event_id="ev-1",
                          type="callback_requested", data=CALLBACK)
        assert EmailNotification.objects.count() == 2  # written in the same transaction...
        raise RuntimeError("the request failed after the callback was recorded")
    assert callbacks == []  # ...so nothing was enqueued, and the rows went with the rollback
    assert not CallbackRequest.objects.exists() and not EmailNotification.objects.exists()
    assert send_pending() == {} and mail.outbox == []


def test_a_committed_callback_request_enqueues_its_emails_after_commit(runtime, recipients, monkeypatch,
                                                                       django_capture_on_commit_callbacks):
    enqueued = []
    monkeypatch.setattr(publisher, "publish", lambda ids, **kw: enqueued.extend(ids) or len(ids))
    with django_capture_on_commit_callbacks(execute=True):
        request_callback(runtime)
    assert sorted(enqueued) == sorted(str(pk) for pk in EmailNotification.objects.values_list("pk", flat=True))
    assert len(enqueued) == 2


def test_an_smtp_failure_is_retried_later_and_the_mail_is_sent_once(runtime, recipients, settings, monkeypatch):
    settings.EMAIL_BACKEND = "tests.support.mail_backends.FlakyLocmemBackend"
    settings.TEST_EMAIL_FAIL_FIRST = 1
    settings.NOTIFICATION_RETRY_SCHEDULE = [60]
    request_callback(runtime, requested_window="asap")
    row = EmailNotification.objects.order_by("to_email").first()
    assert send_notification(row.pk) == "retry"
    row.refresh_from_db()
    assert (row.status, row.attempts, row.enqueued_at) == ("pending", 1, None)
    assert "SMTPServerDisconnected" in row.last_error and mail.outbox == []
    assert send_notification(row.pk) == "not_due"  # a duplicate task before the due time does nothing
    enqueued = []
    monkeypatch.setattr(publisher, "publish", lambda ids, **kw: enqueued.extend(ids) or len(ids))
    EmailNotification.objects.filter(pk=row.pk).update(next_attempt_at=row.next_attempt_at.replace(year=2000))
    publisher.sweep()
    assert str(row.pk) in enqueued
    assert send_notification(row.pk) == "sent" and send_notification(row.pk) == "skipped"
    row.refresh_from_db()
    assert (row.status, row.attempts) == ("sent", 2) and row.sent_at is not None
    assert [m.to for m in mail.outbox] == [[row.to_email]]


def test_attempts_run_out_and_the_row_is_marked_failed(runtime, recipients, settings):
    settings.EMAIL_BACKEND = "tests.support.mail_backends.FlakyLocmemBackend"
    settings.TEST_EMAIL_FAIL_FIRST = 100
    settings.NOTIFICATION_RETRY_SCHEDULE = [0, 0]
    request_callback(runtime)
    row = EmailNotification.objects.order_by("to_email").first()
    assert [send_notification(row.pk) for _ in range(4)] == ["retry", "retry", "failed", "skipped"]
    row.refresh_from_db()
    assert (row.status, row.attempts, row.next_attempt_at) == ("failed", 3, None) and mail.outbox == []


def test_a_recently_enqueued_row_is_not_swept_twice(runtime, recipients, monkeypatch):
    enqueued = []
    monkeypatch.setattr(publisher, "publish", lambda ids, **kw: enqueued.extend(ids) or len(ids))
    request_callback(runtime)
    assert publisher.sweep() == 0  # enqueued on commit just now: the sweep leaves them to that task
    EmailNotification.objects.update(enqueued_at=None)  # as if the broker had lost them
    assert publisher.sweep() == 2 and publisher.sweep() == 0


def test_a_callback_on_a_call_that_ends_as_a_robocall_was_already_mailed(runtime, recipients):
    """Messages of unscorable calls are filtered, callback requests are not: those go out mid-call, at once
    (docs/webhooks.md#event-types)."""
    call = request_callback(runtime)
    runtime.complete(call.runtime_call_id, classification="robocall", outcome="", messages=[])
    assert len(send_pending()) == 2


def test_a_call_without_a_location_is_dated_in_the_organizations_zone(runtime, recipients, org):
    org.time_zone = "America/Los_Angeles"
    org.save(update_fields=["time_zone"])
    request_callback(runtime)  # started at 12:00 UTC, no location
    send_pending()
    assert all("Call started: Nov 20, 2026, 04:00 America/Los_Angeles" in m.body for m in mail.outbox)
