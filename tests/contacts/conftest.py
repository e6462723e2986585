import pytest

from contacts import services


@pytest.fixture
def contact(org):
    return services.contact_create(
        org=org, phone_number="+1 (415) 555-0100", name="Maria Lopez", email="Maria@Example.com",
        notes="Prefers texts.", source="dashboard",
    )


@pytest.fixture
def other_contact(other_org):
    return services.contact_create(org=other_org, phone_number="+14155550177", name="Other Person", source="api")
