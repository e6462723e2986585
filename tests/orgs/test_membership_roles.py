"""Role changes keep at least one admin, also when two admins demote each other at the same moment."""

import threading

import pytest
from django.db import connection

from core.errors import Forbidden, ValidationFailed
from orgs.models import Membership
from orgs.services import membership_set_role
from tests.factories import MembershipFactory


def test_the_last_admin_cannot_be_demoted(org, admin):
    membership = Membership.objects.get(user=admin, organization=org)
    with pytest.raises(ValidationFailed):
        membership_set_role(membership=membership, by=admin, role="member")
    membership.refresh_from_db()
    assert membership.role == "admin"


@pytest.mark.django_db(transaction=True)
def test_two_admins_demoting_each_other_at_once_leave_one_admin_and_no_deadlock(org):
    first, second = (MembershipFactory(organization=org, role="admin") for _ in range(2))
    barrier = threading.Barrier(2)
    outcomes = []

    def demote(target, by):
        barrier.wait()
        try:
            membership_set_role(membership=target, by=by.user, role="member")
            outcomes.append("demoted")
        except ValidationFailed:
            outcomes.append("refused")
        except Forbidden:  # its author was demoted first
            outcomes.append("refused")
        except Exception as exc:  # a deadlock would land here
            outcomes.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=demote, args=pair) for pair in ((first, second), (second, first))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # One demotion wins; the other is refused (last admin, or its author is no longer an admin); never a deadlock.
    assert sorted(outcomes) == ["demoted", "refused"], outcomes
    assert Membership.objects.filter(organization=org, role="admin").count() == 1
