"""The 4.5 MB body limit for requests that carry no Content-Length (`Transfer-Encoding: chunked`).

Django sizes a body by Content-Length alone: without one it reads nothing, so a chunked PATCH would answer
200 having ignored its body. This WSGI wrapper reads such a body first (the server has already undone the
chunking), answers 413 once it passes the limit, and otherwise hands Django the bytes with their length.
Bodies with a Content-Length are left to BodySizeLimitMiddleware, which decides before reading anything.
"""

import io
import json
import uuid

from django.conf import settings

from core.errors import error_body

TOO_LARGE = json.dumps(error_body("payload_too_large")).encode()


class ChunkedBodyLimit:
    def __init__(self, application):
        self.application = application
        self.limit = settings.MAX_REQUEST_BODY_BYTES

    def __call__(self, environ, start_response):
        if environ.get("CONTENT_LENGTH") or "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            return self.application(environ, start_response)
        stream, body = environ["wsgi.input"], bytearray()
        while len(body) <= self.limit:
            chunk = stream.read(min(65536, self.limit + 1 - len(body)))
            if not chunk:
                break
            body += chunk
        if len(body) > self.limit:
            headers = [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(TOO_LARGE))),
                ("Connection", "close"),
                ("X-Request-Id", f"req_{uuid.uuid4().hex}"),
            ]
            start_response("413 Payload Too Large", headers)
            return [TOO_LARGE]
        environ["wsgi.input"] = io.BytesIO(bytes(body))
        environ["CONTENT_LENGTH"] = str(len(body))
        return self.application(environ, start_response)
