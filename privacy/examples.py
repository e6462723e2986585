"""An example `contact.erased` for test deliveries (nothing is written)."""

import uuid


def contact_erased(org) -> dict:
    return {"erasure_request_id": str(uuid.uuid4()), "contact_id": str(uuid.uuid4()),
            "call_ids": [str(uuid.uuid4()), str(uuid.uuid4())]}
