"""The floor's settings (bench.api_floor): the project's settings (its Redis cache, its DRF configuration) with none
of its middleware and its floor views at the root. Served with no access log, as the ceiling is."""

from bench.settings import *  # noqa: F403

MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.floor_urls"
