"""Request ids: one per request, on the response and on every log line written while serving it."""

import contextvars
import logging
import re

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

# An incoming id is reused only when it is short and plain, so a client cannot inject into logs.
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{8,64}")  # used with fullmatch


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True
