"""factory_boy factories and small builders shared by the suite."""

import factory
from django.contrib.auth import get_user_model

from orgs.models import Membership, Organization
from orgs.services import api_key_create
from orgs.verification import mark_verified

User = get_user_model()


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    username = factory.SelfAttribute("email")
    password = factory.django.Password("correct-horse-battery")

    @factory.post_generation
    def email_verified(obj, create, extracted, **kwargs):  # noqa: N805 - factory_boy's signature
        """An established account: its address is confirmed (orgs.verification), unless `email_verified=False`."""
        if create and extracted is not False:
            mark_verified(user=obj)


class OrganizationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Org {n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    organization = factory.SubFactory(OrganizationFactory)
    role = Membership.Role.ADMIN


def make_key(org, *, scope="read_write", name="Test key", admin=None, location_ids=None):
    """Creates a key through the real service and returns (key, plaintext)."""
    if admin is None:
        admin = MembershipFactory(organization=org, role=Membership.Role.ADMIN).user
    return api_key_create(org=org, created_by=admin, name=name, scope=scope, location_ids=location_ids)
