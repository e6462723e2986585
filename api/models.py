"""The interface layer's own table: the answers it keeps for retries sent with an `Idempotency-Key`."""

from django.db import models

from orgs.models import ApiKey


class IdempotencyKey(models.Model):
    """The first answer to a POST or PATCH sent with an `Idempotency-Key`, per API key, kept 24 hours.

    Written in the same transaction as the change the request made, so there is never a change without its record
    or a record without its change (api/idempotency.py).
    """

    id = models.BigAutoField(primary_key=True)
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # Keyed: an HMAC of the SHA-256 of method, path and body (orgs.crypto.keyed_fingerprint), never the bare digest.
    fingerprint = models.CharField(max_length=80)
    status_code = models.PositiveSmallIntegerField()
    body = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "orgs_idempotencykey"  # made in orgs 0004; the model moved here in api 0001, the table stayed
        constraints = [models.UniqueConstraint(fields=["api_key", "key"], name="uniq_idempotency_key")]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created")]

    def __str__(self):
        return f"{self.key} ({self.status_code})"
