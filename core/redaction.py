"""Secrets out of text that is kept: every log line (voiceagent.logging's ScrubFilter, gunicorn's logs) and the audit
trail's labels and values (audit.services)."""

import re

# What must never reach a log line or an audit entry, whatever wrote it: API keys, webhook secrets, bearer tokens,
# recording tokens, and the tokens of invitation and password-reset links, which travel in the path
# (/invitations/<id>/<token>/, /password-reset/<uidb64>/<token>/ but not its token-less /set-password/ step).
# gunicorn's access and error logs run this too (voiceagent/gunicorn_logging.py).
_SECRETS = (
    (re.compile(r"va_live_[A-Za-z0-9]{4}[A-Za-z0-9]+"), "va_live_[redacted]"),
    (re.compile(r"whsec_[A-Za-z0-9+/=]+"), "whsec_[redacted]"),
    (re.compile(r"(Bearer\s+)\S+", re.IGNORECASE), r"\1[redacted]"),
    (re.compile(r"([?&](?:token|signature|X-Amz-Signature|X-Amz-Credential)=)[^&\s\"']+", re.IGNORECASE),
     r"\1[redacted]"),
    (re.compile(r"(/recordings/)(?!\?)[^/\s?\"']+"), r"\1[redacted]"),
    (re.compile(r"(/invitations/[^/\s?#\"']+/)[^/\s?#\"']+"), r"\1[redacted]"),
    (re.compile(r"(/password-reset/[^/\s?#\"']+/)(?!set-password(?:[/\s?#\"']|$))[^/\s?#\"']+"), r"\1[redacted]"),
)


# ASCII text in which none of these appears (lowercased) holds nothing _SECRETS matches: each pattern needs one of
# them. Nearly every log line is such text (gunicorn's access line of an API request), and one scan for them costs a
# fraction of the seven substitutions. (Other text always goes through them: an ignore-case pattern also matches
# letters such as U+017F, the long s, that lowercasing leaves alone.)
_MARKERS = ("va_live_", "whsec_", "bearer", "token=", "signature=", "x-amz-credential=", "/recordings/",
            "/invitations/", "/password-reset/")


def scrub(text: str) -> str:
    if text.isascii():
        lowered = text.lower()
        if not any(marker in lowered for marker in _MARKERS):
            return text
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text
