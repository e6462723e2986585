"""Management commands as an operator runs them."""

from io import StringIO

from django.core.management import call_command

from tests.support.clients import key_client


def run(*args) -> list[str]:
    """Runs the command `args` and returns the lines it printed."""
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def me(plaintext: str):
    """`GET /v1/me` with the key a command printed."""
    return key_client(plaintext).get("/v1/me")
