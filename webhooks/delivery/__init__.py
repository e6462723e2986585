"""Delivering webhooks, by job (the `deliver_batch` task's body; which deliveries are due, what the sweep publishes,
is `selectors.due_deliveries`):

- `claim`: the fair claim (its SQL, prepared or inline behind a transaction-mode pooler): due, unleased deliveries
  taken under a lease and a token within every subscription's share; `_release` gives back what was never sent.
- `send`: `send_batch` (claim, sign with `build_headers`, POST on this process's sender threads through each
  subscription's gate, record and claim more as POSTs finish) and `BatchResults`.
- `record`: `record_batch` (each attempt logged, each delivery moved on under its claim's token, the retry's
  `next_delay`) and the subscriptions' health: slow-downs (`slow_reason`, `MAX_PAUSE_SECONDS`), the failure streak
  (`FAILING_AFTER`) and its operational events, disables, exhaustion e-mails.

Exactly-once per attempt: a worker claims deliveries (a batch at a time) with one conditional UPDATE (due,
pending, no live lease) that sets a lease and a token. A duplicate task run finds the lease and does nothing.
Only the token holder records the result. A worker killed mid-send leaves the lease to expire; the sweeper then
enqueues the delivery again (at least once, never lost). Receivers dedupe on `webhook-id`.

The claim function is not re-exported here: `delivery.claim` is its module (`from webhooks.delivery.claim import
claim`), so that patching and importing the module by its path always reach the module.
"""

from .claim import RATE_HORIZON
from .record import FAILING_AFTER, MAX_PAUSE_SECONDS, next_delay, record_batch, slow_reason
from .send import REFILL_SECONDS, BatchResults, build_headers, send_batch

__all__ = [
    "FAILING_AFTER",
    "MAX_PAUSE_SECONDS",
    "RATE_HORIZON",
    "REFILL_SECONDS",
    "BatchResults",
    "build_headers",
    "next_delay",
    "record_batch",
    "send_batch",
    "slow_reason",
]
