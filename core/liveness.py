"""How a long response tells the server process that it is working, not stuck.

gunicorn's sync worker proves it is alive between requests only, so its arbiter kills a worker whose one request
has run longer than `WEB_TIMEOUT`, however steadily it is sending (a million-row export takes longer than that). A
response that makes progress calls `beat()` as it goes; gunicorn.conf.py's `post_fork` points it at the worker's
`notify`. A response stuck on a client that stops reading makes no progress, so it stops beating and the timeout
still ends it. Outside gunicorn `beat()` does nothing.
"""

_notify = None


def set_notify(notify) -> None:
    global _notify
    _notify = notify


def beat() -> None:
    if _notify is not None:
        _notify()
