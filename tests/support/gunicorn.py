"""A gunicorn of the project, started from its root as an operator would (so gunicorn.conf.py applies), serving
the test database to a test that commits its data (`django_db(transaction=True)`)."""

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from tests.support import celery_worker
from tests.support.waiting import listening, wait_until


@contextmanager
def running_gunicorn(log_path: Path, **env):
    port = celery_worker.free_port()
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "voiceagent.test_settings", "WEB_WORKERS": "1",
           "DATABASE_URL": celery_worker.test_database_url(), **env}
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "voiceagent.wsgi", "--bind", f"127.0.0.1:{port}"],
        cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        wait_until(lambda: listening(port), 60,
                   lambda: f"gunicorn listening on {port}:\n{log_path.read_text()[-3000:]}", interval=0.1)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(60)  # a graceful stop; on a loaded 2-core machine it has taken more than 10 s
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()
