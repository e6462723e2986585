"""The message middleware builds its storage only for a request that uses it; flash messages still travel from
one page to the next."""

import pytest
from django.contrib import messages
from django.contrib.messages import get_messages
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.functional import empty

from voiceagent.middleware import LazyMessageMiddleware


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
