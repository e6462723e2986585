"""Writes of the calls app, one module per capability. Keyword-only, one transaction each, and every event emitted
explicitly by the service that made the change.

- `lifecycle`: a call's start and completion (with its messages, order and contact).
- `tool_events`: mid-call tool events and what they do at once (callbacks, escalations, bookings, cancellations).
- `orders`: placing an order and moving it through its statuses.
- `recordings`: storing a call's recording.
- `inbox`: the team marking callbacks, messages and escalations handled.
- `rollup`: folding the analytics rollup's deltas into its rows (the periodic task's work).
- `lookups`: the rows the services above share (the locked call, org-owned ids from a body, phone numbers).

What configures the runtime (locations, facts, team members, escalation rules, calendars) is written by
knowledge.services.

The agent runtime (calls/runtime), the public API (calls/api) and the dashboard all come through here, importing
from the module that holds the service. Idempotency under retries is the database's job: the runtime's call id
and event ids sit under unique constraints, a retried insert fails inside a savepoint, and the service answers
with the stored row.
"""
