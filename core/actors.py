"""Who is acting, for the entries the audit trail records (audit.services): set per request by the interfaces, `system`
when none is.

The interfaces bind their request (`bind_request`, by the request-id middleware, so every request has one) and may
name an explicit actor (`acting_as`: the agent runtime, a sign-in before the session knows its user). The actor is
resolved only when an entry is written: an API request's key, a dashboard request's signed-in user. Context
variables, not thread locals, so a worker thread or a task never inherits a request it does not serve.
"""

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Actor:
    type: str  # user | api_key | runtime | system
    id: str | None
    label: str


SYSTEM = Actor("system", None, "system")
RUNTIME = Actor("runtime", None, "agent runtime")

_request: contextvars.ContextVar = contextvars.ContextVar("audit_request", default=None)
_actor: contextvars.ContextVar = contextvars.ContextVar("audit_actor", default=None)


def bind_request(request) -> contextvars.Token:
    """Makes `request` the one entries are attributed to until `unbind_request(token)`."""
    return _request.set(request)


def unbind_request(token: contextvars.Token) -> None:
    _request.reset(token)


def current_request():
    return _request.get()


@contextmanager
def acting_as(actor: Actor):
    """Entries recorded inside this block name `actor` (the runtime, a system job, a user not signed in yet)."""
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


def user_actor(user) -> Actor:
    return Actor("user", str(user.pk), user.email or user.get_username())


def key_actor(key) -> Actor:
    return Actor("api_key", str(key.pk), f"{key.name} ({key.key_prefix}...)")


def actor_of(who) -> Actor | None:
    """An actor from what a service was handed: a user, an API key, or None (then the request context decides)."""
    if who is None or isinstance(who, Actor):
        return who
    if hasattr(who, "key_prefix"):
        return key_actor(who)
    if getattr(who, "is_authenticated", False) and getattr(who, "pk", None) is not None:
        return user_actor(who)
    return None


def current_actor() -> Actor:
    explicit = _actor.get()
    if explicit is not None:
        return explicit
    request = _request.get()
    if request is None:
        return SYSTEM
    # DRF's Request keeps the key in `auth`; the Django request it wraps gets `_audit_key` from the authenticator.
    named = getattr(request, "_audit_actor", None)  # the runtime's authenticator names it
    if named is not None:
        return named
    key = getattr(request, "_audit_key", None)
    if key is not None:
        return key_actor(key)
    user = getattr(request, "user", None)
    if user is not None and getattr(user, "is_authenticated", False) and getattr(user, "pk", None) is not None:
        return user_actor(user)
    return SYSTEM
