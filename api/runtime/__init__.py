"""The agent runtime's internal API plumbing (/internal/agent/v1/), shared by the calls and the meetings runtime
endpoints: the service-token check (authentication.py) and the base view (views.py). The public API's pipeline is
the rest of this package."""
