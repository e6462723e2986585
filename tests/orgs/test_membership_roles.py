"""Role changes keep at least one admin, also when two admins demote each other at the same moment."""


import pytest

from core.errors import Forbidden, ValidationFailed
from orgs.models import Membership
from orgs.services import membership_set_role
from tests.factories import MembershipFactory
from tests.support.races import run_together


def test_the_last_admin_cannot_be_demoted(org, admin):
    membership = Membership.objects.get(user=admin, organization=org)
    with pytest.raises(ValidationFailed):
        membership_set_role(membership=membership, by=admin, role="member")
    membership.refresh_from_db()
    assert membership.role == "admin"


@pytest.mark.django_db(transaction=True)
def test_two_admins_demoting_each_other_at_once_leave_one_admin_and_no_deadlock(org):
    first, second = (MembershipFactory(organization=org, role="admin") for _ in range(2))

    def demote(target, by):
        try:
            membership_set_role(membership=target, by=by.user, role="member")
            return "demoted"
        except (ValidationFailed, Forbidden):  # the last admin, or its author was demoted first
            return "refused"

    # A deadlock (or any other error) comes back as its exception.
    outcomes = [o if isinstance(o, str) else repr(o)
                for o in run_together(lambda: demote(first, second), lambda: demote(second, first))]
    # One demotion wins; the other is refused (last admin, or its author is no longer an admin); never a deadlock.
    assert sorted(outcomes) == ["demoted", "refused"], outcomes
    assert Membership.objects.filter(organization=org, role="admin").count() == 1
