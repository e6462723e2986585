"""Request ids: one per request, on the response and on every log line written while serving it."""

import contextvars
import json
import logging
import re
import time

from core.redaction import scrub

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

# An incoming id is reused only when it is short and plain, so a client cannot inject into logs.
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{8,64}")  # used with fullmatch


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        return True


class ScrubFilter(logging.Filter):
    """Renders the message once, without secrets; every handler of the project runs it (LOGGING)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            # Formatters print exc_text when it is set, so the traceback goes out scrubbed; exc_info stays for
            # handlers that inspect the exception itself.
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
        return True


# The request fields a JSON line carries when the record has them (set by RequestLogMiddleware).
JSON_FIELDS = ("org_id", "key_prefix", "route", "method", "status", "duration_ms")


class JsonFormatter(logging.Formatter):
    """LOG_FORMAT=json: one object per line (time, level, logger, message, request_id, and the request fields)."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        line.update({field: getattr(record, field) for field in JSON_FIELDS if hasattr(record, field)})
        if record.exc_info or record.exc_text:
            line["exception"] = record.exc_text or scrub(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False, default=str)

    converter = staticmethod(time.gmtime)
