"""Benchmarks: `python -m bench` runs every module in `bench.MODULES`; `python -m bench NAME` runs one."""

MODULES = [
    "webhook_delivery", "webhook_fairness", "webhook_history", "api_reads", "search_and_idempotency", "audit_trail",
    "webhook_tests", "location_scope", "analytics", "exports", "export_isolation", "redaction", "pooling", "api_floor",
    "retention", "alerts",
]
