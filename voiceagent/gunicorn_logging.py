"""gunicorn's logger with the project's redaction (core.redaction.scrub) on its access and error logs: gunicorn
writes them through its own handlers, which Django's LOGGING never reaches, and a path can carry a link's token.

Its access line is built from the atoms the configured format names, and no others: gunicorn's own `atoms()` copies
every request header, response header and WSGI environ entry into the dict on every request, then the format reads
seven of them (half of what the access line cost a request: docs/benchmarks.md). The line is the same, character
for character (tests/ops/test_gunicorn.py compares it with gunicorn's).
"""

import functools
import os
import re

from gunicorn.glogging import Logger

from .logging import ScrubFilter

_scrub = ScrubFilter()
_ATOM = re.compile(r"%\(([^)]*)\)")


@functools.lru_cache(maxsize=8)
def _wanted(access_log_format: str) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]:
    """The plain atoms the format names, and its header / environ atoms as (atom, kind, lowercased name)."""
    plain, keyed = [], []
    for name in dict.fromkeys(_ATOM.findall(access_log_format)):
        if name.startswith("{") and len(name) > 3 and name[-2] == "}" and name[-1] in "ioe":
            keyed.append((name.lower(), name[-1], name[1:-2].lower()))
        else:
            plain.append(name)
    return tuple(plain), tuple(keyed)


class ScrubbingLogger(Logger):
    def setup(self, cfg):
        super().setup(cfg)
        for log in (self.access_log, self.error_log):
            log.addFilter(_scrub)  # once: addFilter ignores a filter already there (a config reload runs setup again)

    def atoms(self, resp, req, environ, request_time):
        """What gunicorn's `atoms()` gives for the atoms the access format names (SafeAtoms answers "-" for the
        rest, as for any atom gunicorn does not know); the full set when the format cannot be read."""
        access_log_format = getattr(self.cfg, "access_log_format", None)
        if not isinstance(access_log_format, str):
            return super().atoms(resp, req, environ, request_time)
        plain, keyed = _wanted(access_log_format)
        atoms = {}
        if plain:
            base = _base_atoms(self, resp, environ, request_time, plain)
            if base is None:
                return super().atoms(resp, req, environ, request_time)
            atoms.update(base)
        for atom, kind, name in keyed:
            if kind == "e":
                for key, value in environ.items():  # the last of any names equal but for case, as gunicorn's
                    if key.lower() == name:
                        atoms[atom] = value
                continue
            headers = resp.headers if kind == "o" else getattr(req, "headers", req)
            if hasattr(headers, "items"):
                headers = headers.items()
            for key, value in headers:
                if key.lower() == name:
                    atoms[atom] = value
        return atoms


def _base_atoms(logger, resp, environ, request_time, names):
    """gunicorn's plain atoms (glogging.Logger.atoms), only those named; None for a name it does not have here."""
    atoms = {}
    for name in names:
        if name == "h":
            atoms[name] = environ.get("REMOTE_ADDR", "-")
        elif name == "l":
            atoms[name] = "-"
        elif name == "u":
            atoms[name] = logger._get_user(environ) or "-"
        elif name == "t":
            atoms[name] = logger.now()
        elif name == "r":
            atoms[name] = f"{environ['REQUEST_METHOD']} {environ['RAW_URI']} {environ['SERVER_PROTOCOL']}"
        elif name == "s":
            status = resp.status
            atoms[name] = status.split(None, 1)[0] if isinstance(status, str) else status
        elif name in ("m", "U", "q", "H"):
            atoms[name] = environ.get({"m": "REQUEST_METHOD", "U": "PATH_INFO", "q": "QUERY_STRING",
                                       "H": "SERVER_PROTOCOL"}[name])
        elif name == "b":
            atoms[name] = getattr(resp, "sent", None) is not None and str(resp.sent) or "-"
        elif name == "B":
            atoms[name] = getattr(resp, "sent", None)
        elif name == "f":
            atoms[name] = environ.get("HTTP_REFERER", "-")
        elif name == "a":
            atoms[name] = environ.get("HTTP_USER_AGENT", "-")
        elif name == "T":
            atoms[name] = request_time.seconds
        elif name == "D":
            atoms[name] = (request_time.seconds * 1000000) + request_time.microseconds
        elif name == "M":
            atoms[name] = (request_time.seconds * 1000) + int(request_time.microseconds / 1000)
        elif name == "L":
            atoms[name] = "%d.%06d" % (request_time.seconds, request_time.microseconds)  # noqa: UP031 - gunicorn's
        elif name == "p":
            atoms[name] = f"<{os.getpid()}>"
        else:
            return None
    return atoms
