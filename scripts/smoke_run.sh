#!/usr/bin/env bash
# `make run` as a newcomer runs it (no DATABASE_URL, no REDIS_URL: embedded servers), checked from the outside and
# stopped: the dashboard's login page answers, the API answers (401 without a key), the demo organization was made,
# and the Celery worker and beat started. .ci/run runs it after the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
setsid env -u DATABASE_URL -u REDIS_URL make run PORT="$port" >"$log" 2>&1 &
group=$!
stop() {
  kill -TERM -- "-$group" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 -- "-$group" 2>/dev/null || return 0; sleep 1; done
  kill -KILL -- "-$group" 2>/dev/null || true
}
trap stop EXIT

fail() { echo "smoke_run: $1"; tail -n 60 "$log"; exit 1; }
for _ in $(seq 1 240); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/login/" 2>/dev/null; then break; fi
  kill -0 "$group" 2>/dev/null || fail "make run exited before serving"
  sleep 1
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/login/" || fail "the login page did not answer within 240 s"
api=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/me")
[ "$api" = 401 ] || fail "GET /v1/me without a key answered $api, not 401"
grep -q "Demo organization" "$log" || fail "seed_demo printed no demo organization"
for _ in $(seq 1 60); do grep -q "ready\." "$log" && grep -Eq "celery beat .* is starting" "$log" && break; sleep 1; done
grep -q "ready\." "$log" || fail "the Celery worker did not start"
grep -Eq "celery beat .* is starting" "$log" || fail "Celery beat did not start"
echo "smoke_run: make run serves the dashboard and the API on :$port, with the demo organization, a worker and beat"
