"""A brake on the forms anyone can post without an account: log in, sign up, password reset.

Counted per client address and minute in the shared cache (Redis in production, the same atomic
counter as the API's rate limits), so guessing passwords or mailing resets in bulk stops at the limit
in every process. Behind a proxy REMOTE_ADDR is the proxy's: configure it to pass the client address.
"""

import time

from django.shortcuts import render

from voiceagent.api.throttling import hit

WINDOW_SECONDS = 60


class AttemptLimitMixin:
    attempt_scope = ""
    attempt_limit = 10  # POSTs per client address per minute

    def post(self, request, *args, **kwargs):
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        address = request.META.get("REMOTE_ADDR", "unknown")
        if hit(f"attempts:{self.attempt_scope}:{address}:{window}", ttl=WINDOW_SECONDS * 2) > self.attempt_limit:
            wait = max(1, int((window + 1) * WINDOW_SECONDS - now + 0.999))
            response = render(request, "dashboard/auth/too_many_attempts.html", {"wait": wait}, status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)
