from tests.support.clients import PASSWORD, logged_in  # noqa: F401 - re-exported for the dashboard tests
