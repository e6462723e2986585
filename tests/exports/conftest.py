import pytest

from tests.support.exports import export_rows


@pytest.fixture
def rows(org, other_org, api, media_in_tmp):
    """Rows of every exported kind in `org` and in `other_org` (tests/support/exports.py)."""
    return export_rows(org, other_org, api)
