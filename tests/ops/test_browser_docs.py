"""The API reference renders in headless Chromium with every request to anything but this server blocked: Redoc
comes from the project's own static files, and the page's Content-Security-Policy lets no other origin run."""

import pytest

from tests.support.browser import BROWSER_MARKS
from tests.support.browser import shot as support_shot

pytestmark = BROWSER_MARKS


@pytest.mark.django_db(transaction=True)
def test_the_docs_page_renders_offline(live_server, page):
    from playwright.sync_api import expect

    blocked = []

    def only_this_server(route):
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    violations = []
    page.on("console", lambda message: violations.append(message.text) if "Content Security Policy" in message.text
            else None)
    page.goto(f"{live_server.url}/api/docs")
    # Redoc lays out the whole schema (~320 KB, 70 operations) before the first heading shows: on a loaded 2-core
    # machine that has taken over 30 s.
    expect(page.get_by_role("heading", name="Voice Agent API").first).to_be_visible(timeout=90_000)
    expect(page.get_by_text("List events").first).to_be_attached()
    support_shot(page, "docs-offline")
    # Nothing left this server, and no script or style was refused: the only refusal is Redoc's "powered by" logo,
    # an image from its CDN that the policy keeps out.
    assert blocked == []
    assert [v for v in violations if "script-src" in v or "style-src" in v] == []
