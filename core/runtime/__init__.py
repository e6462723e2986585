"""The agent runtime's internal API plumbing (/internal/agent/v1/), shared by the calls and the meetings runtime
endpoints: the service-token check (authentication.py) and the base view (views.py). The public API's plumbing
is `core/api/` (the generic views) and `voiceagent/api/` (the key authenticator, idempotency)."""
