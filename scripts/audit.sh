#!/usr/bin/env bash
# pip-audit of the lock. pip-audit reports a package it cannot look up as "not found" and still exits 0, which would
# read as a clean audit: so the advisory service is probed first (the per-release JSON, which carries the
# "vulnerabilities" list; a registry mirror may serve /pypi/NAME/json and still not that), and an unreachable one is
# said, not passed over.
set -euo pipefail
pip_audit="${1:-pip-audit}"
if ! curl -sf --max-time 5 https://pypi.org/pypi/django/5.2.19/json 2>/dev/null | grep -q '"vulnerabilities"'; then
  echo "audit: PyPI's advisory API is not reachable from this machine; no vulnerability audit was run (none is claimed)."
  exit 0
fi
exec "$pip_audit" --strict --disable-pip --require-hashes -r requirements.txt
