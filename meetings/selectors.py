"""Org-scoped reads of the meetings product. Another org's id is the same miss as a missing one."""

from django.db.models import Count, Max, Prefetch

from core.errors import NotFound
from orgs.tenancy import get_for_org, get_or_not_found

from .models import Dispatch, DispatchProgress, Meeting
from .tokens import token_matches


def meeting_list(*, org):
    """The org's meetings, newest first, with their outcome and how often it was dispatched."""
    return (
        Meeting.objects.for_org(org)
        .select_related("outcome", "outcome__approved_by")
        .annotate(
            dispatch_count=Count("outcome__dispatches"), last_dispatched_at=Max("outcome__dispatches__created_at")
        )
        .order_by("-started_at", "-id")
    )


def meeting_get(*, org, meeting_id) -> Meeting:
    """The org's meeting with its outcome and who approved and edited it, or NotFound (orgs.tenancy)."""
    return get_for_org(
        Meeting.objects.select_related("outcome", "outcome__approved_by", "outcome__edited_by"), org, meeting_id
    )


def dispatch_list(*, outcome):
    """An outcome's dispatches, newest first, each with its progress history (oldest first) prefetched."""
    return (
        Dispatch.objects.filter(outcome=outcome)
        .select_related("created_by")
        .prefetch_related(Prefetch("progress", queryset=DispatchProgress.objects.order_by("created_at", "id")))
        .order_by("-created_at", "-id")
    )


def dispatch_for_token(*, dispatch_id, token, lock: bool = False) -> Dispatch | None:
    """The dispatch if `token` is its token, else None (unknown id, wrong or missing token alike). The digest is
    compared in constant time. `lock=True` takes the row lock (SELECT ... FOR UPDATE; inside a transaction)."""
    try:
        # Not org-scoped: the token, checked below, is the only credential of the hook.
        dispatch = get_or_not_found(Dispatch.objects.select_for_update() if lock else Dispatch, dispatch_id)
    except NotFound:
        dispatch = None
    if not token_matches(token, dispatch.token_digest if dispatch is not None else None):
        return None
    return dispatch
