"""The Events page and the call page's "Sent to your systems" for a location manager (issue 28): the events of
their locations only, each with its deliveries to the subscriptions they see; and the call page's hint about a
missing subscription follows the call's location."""

import pytest

from orgs.models import Location
from tests.factories import MembershipFactory
from tests.support.clients import logged_in
from tests.support.runtime import Runtime
from tests.support.webhooks import make_subscription
from webhooks.models import Event
from webhooks.ssrf import masked_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def places(org):
    return (Location.objects.create(organization=org, name="Downtown", timezone="UTC"),
            Location.objects.create(organization=org, name="Uptown", timezone="UTC"))


@pytest.fixture
def manager_client(org, places):
    return logged_in(MembershipFactory(organization=org, role="location_manager", location_ids=[places[0].id]).user)


def _calls(org, places):
    runtime = Runtime(org)
    calls = []
    for n, location in enumerate((*places, None)):
        call_id, _ = runtime.start(location_id=location.id if location else None, from_number=f"+1415555020{n}")
        runtime.complete(call_id)
        calls.append(runtime.call(call_id))
    return calls


def test_a_location_manager_sees_their_locations_events_and_their_subscriptions_deliveries(
    manager_client, org, places
):
    l1, _ = places
    theirs = make_subscription(org, url="https://downtown.example.com/in", events=("call.ended",),
                               location_ids=[l1.id])
    whole = make_subscription(org, url="https://everything.example.com/in", events=("call.ended",
                                                                                       "contact.created"))
    at_l1, at_l2, nowhere = _calls(org, places)
    html = manager_client.get("/events/").content.decode()
    shown = {e.id for e in Event.objects.all() if e.id in html}
    assert shown == set(Event.objects.filter(location_id=l1.id).values_list("id", flat=True)) and len(shown) == 2
    # A location manager is no admin: a subscription's URL shows only its scheme and host (webhooks.ssrf.masked_url).
    assert masked_url(theirs.url) in html and theirs.url not in html and masked_url(whole.url) not in html
    assert "Not sent to a subscription of your locations" in html  # contact.created went to `whole` alone
    for call in (at_l2, nowhere):
        assert manager_client.get("/events/", {"call": str(call.pk)}).content.decode().count(
            'data-testid="event-row"') == 0
        assert manager_client.get(f"/calls/{call.pk}").status_code == 404
    page = manager_client.get(f"/calls/{at_l1.pk}").content.decode()
    assert 'data-testid="sent-panel"' in page and masked_url(theirs.url) in page
    assert theirs.url not in page and masked_url(whole.url) not in page


def test_the_call_pages_hint_follows_the_calls_location(admin_client, org, places):
    l1, l2 = places
    make_subscription(org, events=("call.ended",), location_ids=[l2.id])
    at_l1, at_l2, _ = _calls(org, places)
    hint = "No enabled webhook subscription receives <code>call.ended</code> of this call's location."
    assert hint in admin_client.get(f"/calls/{at_l1.pk}").content.decode()
    assert "No enabled webhook subscription receives" not in admin_client.get(f"/calls/{at_l2.pk}").content.decode()
