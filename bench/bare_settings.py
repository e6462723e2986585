"""The ceiling's own settings: the least Django that answers a JSON view, served by the project's gunicorn command
(`gunicorn voiceagent.wsgi` from the root, so gunicorn.conf.py's workers, worker class and timeouts) with none of the
project's middleware, no database, no access log (WEB_ACCESS_LOG="" in bench.pooling). What `/v1/me` is compared with
is then the stack's cost (gunicorn, WSGI, Django's handler), not the project's. bench/settings.py's bare view, inside
the project's settings, paid the project's middleware and access log, so its ratio hid their cost."""

SECRET_KEY = "bench-bare-only-0123456789-abcdefghijklmnopqrstuvwxyz"  # noqa: S105 - serves nothing secret
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.bare_urls"
DATABASES: dict = {}
USE_TZ = True
MAX_REQUEST_BODY_BYTES = 4_718_592  # voiceagent.wsgi's body-limit wrapper reads it
LOGGING_CONFIG = None
