"""The dashboard's middleware: an API request passes through it (no session, no browser headers) while every page
keeps it; the message storage is built only for a request that uses it, and flash messages still travel from one
page to the next."""

import pytest
from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.messages import get_messages
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.functional import empty
from django.utils.module_loading import import_string

from voiceagent.browser_middleware import LazyMessageMiddleware


@pytest.fixture(autouse=True)
def cookie_storage(settings):
    # The default storage falls back to the session, which these bare requests do not have.
    settings.MESSAGE_STORAGE = "django.contrib.messages.storage.cookie.CookieStorage"


def _through_middleware(view, cookies=None):
    request = RequestFactory().get("/somewhere")
    request.COOKIES.update(cookies or {})
    response = LazyMessageMiddleware(view)(request)
    return request, response


def test_a_request_that_does_not_use_messages_builds_no_storage_and_sets_no_cookie():
    request, response = _through_middleware(lambda request: HttpResponse("ok"))
    assert request._messages._wrapped is empty  # the lazy storage was never built
    assert "messages" not in response.cookies


def _adding(text):
    def view(request):
        messages.success(request, text)
        return HttpResponse("ok")

    return view


def test_a_message_added_is_stored_and_read_on_the_next_request_then_cleared():
    _, response = _through_middleware(_adding("Saved."))
    cookie = response.cookies["messages"].value
    assert cookie

    seen = []

    def read(request):
        seen.extend(str(m) for m in get_messages(request))
        return HttpResponse("ok")

    _, response = _through_middleware(read, {"messages": cookie})
    assert seen == ["Saved."]
    assert response.cookies["messages"].value == ""  # read, so deleted


def test_a_stored_message_nobody_reads_stays_for_the_next_page():
    _, response = _through_middleware(_adding("Later."))
    cookie = response.cookies["messages"].value
    _, response = _through_middleware(lambda request: HttpResponse("ok"), {"messages": cookie})
    assert "messages" not in response.cookies  # untouched: the browser keeps its cookie


def test_the_dashboard_middleware_has_no_hook_that_runs_outside_the_chain():
    # Passing an API request through skips a middleware only if all it does is in __call__ (Django calls
    # process_view and the like from outside the chain): a Django upgrade that adds one must be looked at.
    browser = [import_string(path) for path in django_settings.MIDDLEWARE if ".browser_middleware." in path]
    assert len(browser) == 5
    for cls in browser:
        hooks = [h for h in ("process_view", "process_exception", "process_template_response") if hasattr(cls, h)]
        assert hooks == [], (cls, hooks)


@pytest.mark.django_db
def test_an_api_answer_carries_no_browser_state_and_a_page_keeps_it(client, api):
    answer = api.get("/v1/me")
    assert answer.status_code == 200
    assert "X-Frame-Options" not in answer and "sessionid" not in answer.cookies and "Vary" not in answer
    page = client.get("/login/")
    assert page.status_code == 200
    assert page["X-Frame-Options"] == "DENY"
    assert "csrftoken" in page.cookies
