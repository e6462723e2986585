"""The places every tenant shares, counted so they mean the same on any number of nodes and no few tenants can hold
them all (issue 35 item 8, issue 38 item 2): an organization's cap is fleet-wide; each node holds at most a quarter
of its own web workers in exports (keys named by NODE_ID); and once more than half of a node's places are held, the
rest go only to organizations that hold none and took or gave back none in the last PLACES_FAIR_SHARE_SECONDS."""

import pytest
from rest_framework.test import APIClient

from contacts.models import Contact
from core import counters
from core.csvexport import ExportsBusy, take_places
from tests.factories import OrganizationFactory, make_key
from tests.support.waiting import wait_until

# The test client closes a response itself, which closes the database connection: rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

RATE_LIMITED = {"error": "rate_limited"}


def _client(org) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, scope='read')[1]}")
    Contact.objects.create(organization=org, phone_number="+14155550100", phone_digits="14155550100", name="A",
                           source="api")
    return client


def _export(client):
    """An export started and left open (a slow client): the response, which holds its places until closed; or the
    refusal."""
    response = client.get("/v1/exports/contacts.csv")
    if response.status_code == 200:
        assert next(iter(response.streaming_content)).startswith(b"id,")
    return response


def _refused(response, most: int = 10) -> bool:
    assert response.status_code == 429, response.status_code
    assert response.json() == RATE_LIMITED
    assert 1 <= int(response["Retry-After"]) <= most
    return True


@pytest.fixture
def node(settings):
    settings.NODE_ID = "node-a"
    settings.WEB_WORKERS = 16  # 4 export places on this node
    settings.PLACES_FAIR_SHARE_SECONDS = 60
    return settings


def test_a_tenant_holding_places_gets_the_open_half_and_others_still_get_in(node):
    node.EXPORTS_PER_ORG_AT_ONCE = 4  # an organization alone could hold the whole node
    greedy, measured, third, fourth = (OrganizationFactory(name=f"Tenant {i}") for i in range(4))
    greedy_client = _client(greedy)
    held = []
    try:
        for _ in range(2):
            held.append(_export(greedy_client))
            assert held[-1].status_code == 200
        # Half the node's places are held: the greedy tenant, which holds some, is refused the rest...
        assert _refused(_export(greedy_client))
        # ...which the others still get.
        held.append(_export(_client(measured)))
        assert held[-1].status_code == 200
        held.append(_export(_client(third)))
        assert held[-1].status_code == 200
        # The node's four places are all held: everyone waits.
        assert _refused(_export(_client(fourth)))
        assert _refused(_export(greedy_client))
    finally:
        for response in held:
            response.close()


def test_a_tenant_that_just_exported_waits_behind_those_that_have_not(node):
    tenants = [OrganizationFactory(name=f"Tenant {i}") for i in range(3)]
    clients = [_client(org) for org in tenants]
    held = [_export(clients[0]), _export(clients[1])]  # two tenants hold half the places
    try:
        assert [response.status_code for response in held] == [200, 200]
        # A third tenant's export ended a moment ago: with more than half the places about to be held, it waits...
        take_places(tenants[2].pk).release()
        assert _refused(_export(clients[2]))
        # ...while one that has not exported lately gets in.
        fresh = _export(_client(OrganizationFactory(name="Fresh")))
        assert fresh.status_code == 200
        fresh.close()
        # Below half, anyone gets a place, lately or not.
        held.pop().close()
        second = _export(clients[1])
        assert second.status_code == 200
        held.append(second)
    finally:
        for response in held:
            response.close()


def test_lately_means_the_fair_share_window(node):
    node.PLACES_FAIR_SHARE_SECONDS = 1
    holders = [take_places(OrganizationFactory().pk) for _ in range(2)]
    try:
        org = OrganizationFactory()
        take_places(org.pk).release()
        with pytest.raises(ExportsBusy) as busy:
            take_places(org.pk)
        assert (busy.value.scope, busy.value.wait) == ("share", 1)

        def admitted():
            try:
                take_places(org.pk).release()
                return True
            except ExportsBusy:
                return False

        wait_until(admitted, 10, "the organization's last export aged out of the window")
    finally:
        for places in holders:
            places.release()


def test_each_node_holds_a_quarter_of_its_own_workers_and_an_organizations_cap_is_fleet_wide(settings):
    settings.WEB_WORKERS = 4  # one export place per node
    ours, theirs = OrganizationFactory(), OrganizationFactory()
    settings.NODE_ID = "node-a"
    on_a = take_places(ours.pk)
    try:
        with pytest.raises(ExportsBusy) as busy:
            take_places(theirs.pk)
        assert busy.value.scope == "all"  # node a is full
        settings.NODE_ID = "node-b"  # another node has its own quarter: ten nodes hold ten times one
        on_b = take_places(theirs.pk)
        try:
            with pytest.raises(ExportsBusy) as busy:
                take_places(ours.pk)
            assert busy.value.scope == "organization"  # the organization's one export runs on node a
        finally:
            on_b.release()
        client = counters._client()
        # The keys say which is per node and which per fleet.
        assert on_a.names == [f"exports:fleet:org:{ours.pk}", "exports:node:node-a"]
        assert all(client.exists(counters._name(name)) for name in on_a.names)
    finally:
        on_a.release()
