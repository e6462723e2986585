"""Builders for the knowledge base, all through the real services (which also bump knowledge_version)."""

import pytest

from knowledge import services
from orgs.models import Membership
from tests.factories import UserFactory


@pytest.fixture
def location(org):
    return services.location_create(
        org=org, name="Downtown", address="1 Market St, San Francisco", timezone="America/Los_Angeles",
        phone_number="(415) 555-0100",
    )


@pytest.fixture
def other_location(other_org):
    return services.location_create(
        org=other_org, name="Elsewhere", address="2 Main St", timezone="Europe/Paris", phone_number="+33142685300"
    )


@pytest.fixture
def fact(org):
    return services.fact_create(org=org, label="Opening hours", content="We open 11am to 10pm every day.")


@pytest.fixture
def other_fact(other_org):
    return services.fact_create(org=other_org, label="Secret", content="Another org's fact.")


@pytest.fixture
def team_member(org):
    return services.team_member_create(
        org=org, name="Dana Cook", email="dana@example.com", phone_number="415-555-0111", role="Manager"
    )


@pytest.fixture
def other_team_member(other_org):
    return services.team_member_create(org=other_org, name="Olga Other")


@pytest.fixture
def platform_member(org):
    user = UserFactory(email="pat@example.com")
    Membership.objects.create(user=user, organization=org, role=Membership.Role.MEMBER)
    return services.team_member_create(org=org, name="Pat Platform", email="pat@example.com", user=user)
