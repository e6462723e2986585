"""Dashboard clients logged in through the real authentication backend (never force_login)."""

from django.test import Client

PASSWORD = "correct-horse-battery"  # tests.factories.UserFactory's password


def logged_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client
