"""Headless Debian Chromium driven by Playwright, for the browser tests.

A pytest plugin (tests/conftest.py loads it): the `browser` and `page` fixtures are there for every test; a
browser test module sets `pytestmark = BROWSER_MARKS` and may call `shot(page, name)`. Nothing is
downloaded: Playwright drives /usr/bin/chromium (`apt-get install chromium`; `.ci/run` installs it); the
tests skip without it.
"""

import os
import shutil
from pathlib import Path

import pytest

from tests.support.clients import PASSWORD

# Playwright's sync API runs an event loop in this thread; Django's ORM would otherwise refuse to run here.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"),
]


@pytest.fixture
def browser(no_persistent_db_connections):
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    from django.db import connections

    context = browser.new_context(viewport={"width": 1280, "height": 860})
    new_page = context.new_page()
    new_page.set_default_timeout(15_000)
    try:
        yield new_page
    finally:
        context.close()
        # With Playwright's loop running, the test's ORM uses a connection of its own context, which pytest-django
        # does not close; left open, it would block the test database's teardown.
        connections.close_all()


@pytest.fixture
def no_persistent_db_connections(monkeypatch):
    # Live-server threads serve Chromium's keep-alive sockets; with CONN_MAX_AGE they would hold a database
    # session open past the test and race the test database's teardown.
    from django.db import connections

    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)


def shot(page, name: str) -> None:
    # A whole page of the API docs (Redoc, 80 operations) took over 15 s, Playwright's default, to capture in a CI
    # run on the loaded 2-core machine; the screenshot is a record, not what the test asserts.
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True, timeout=60_000)


def log_in(page, live_server, email: str, password: str = PASSWORD) -> None:
    """Logs `email` in through the login page (tests.factories' users share PASSWORD)."""
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
