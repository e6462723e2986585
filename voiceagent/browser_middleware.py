"""The dashboard's middleware: Django's own, passed through by API requests.

An API request (/v1/, /internal/, /hooks/: a key or a token, no cookie, JSON) has no session, no logged-in user, no
flash message, no page to frame and no htmx; the stock middleware still did that work for it, a measurable part of
/v1/me's CPU (docs/benchmarks.md#figures-behind-the-code). These subclasses keep the stock behaviour for every other
request. None of them has a process_view or process_exception, the hooks Django calls apart from the chain, so passing a
request through skips all of it. CSRF stays as it is: it guards the dashboard's forms and DRF's views are exempt anyway.
"""

from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.utils.functional import SimpleLazyObject, empty
from django_htmx.middleware import HtmxMiddleware

from api.errors import is_api_path


class _BrowserOnly:
    def __call__(self, request):
        if is_api_path(request.path_info):
            return self.get_response(request)
        return super().__call__(request)


class BrowserSessionMiddleware(_BrowserOnly, SessionMiddleware):
    pass


class BrowserAuthenticationMiddleware(_BrowserOnly, AuthenticationMiddleware):
    pass


class BrowserXFrameOptionsMiddleware(_BrowserOnly, XFrameOptionsMiddleware):
    pass


class BrowserHtmxMiddleware(_BrowserOnly, HtmxMiddleware):
    pass


class LazyMessageMiddleware(_BrowserOnly, MessageMiddleware):
    """Django's MessageMiddleware, but the message storage is built only when a request uses it: the stock one
    builds a cookie signer and two storages on every request (~30 us). A request that neither reads nor adds a
    message would store nothing on the way out either, so skipping it there changes nothing."""

    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response
        return super().process_response(request, response)
