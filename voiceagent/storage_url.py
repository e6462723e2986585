"""RECORDINGS_STORAGE_URL, read by the settings: `s3://<bucket>?endpoint_url=<url>&region=<region>` puts recordings in
S3-compatible object storage (django-storages with boto3), shared by every node, so any node plays back what any node
stored. Credentials come from the environment as boto3 reads them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, or the
machine's role), never from the URL. `endpoint_url` is for an S3-compatible server (MinIO, Ceph, moto in the
tests) and is left out for AWS itself; such servers get path-style addressing unless `addressing_style` says."""

import re
from urllib.parse import parse_qs, urlsplit

from django.core.exceptions import ImproperlyConfigured

SETTING = "RECORDINGS_STORAGE_URL"
FORM = "s3://<bucket>?endpoint_url=<url>&region=<region>"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_KEYS = {"endpoint_url", "region", "addressing_style"}


def _refuse(reason: str) -> ImproperlyConfigured:
    # The value itself is not repeated: it may hold what someone pasted there by mistake (a key).
    return ImproperlyConfigured(f"{SETTING} cannot be parsed: {reason}. Expected {FORM}.")


def s3_storage(url: str, *, expire_seconds: int) -> dict:
    """The STORAGES entry for `url`; ImproperlyConfigured naming the setting when it cannot be parsed."""
    try:
        parts = urlsplit(url)
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise _refuse("not a URL") from exc
    if parts.scheme != "s3":
        raise _refuse("the scheme must be s3://")
    if parts.username is not None or parts.password is not None:
        raise _refuse("credentials do not belong in the URL (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
    if not _BUCKET.fullmatch(parts.netloc or ""):
        raise _refuse("the bucket name must be 3-63 lowercase letters, digits, dots and hyphens")
    if parts.path not in ("", "/") or parts.fragment:
        raise _refuse("nothing may follow the bucket name but the query")
    unknown = sorted(set(query) - _KEYS)
    if unknown:
        raise _refuse(f"unknown parameter(s) {', '.join(unknown)}")
    if any(len(values) != 1 or not values[0] for values in query.values()):
        raise _refuse("each parameter once, with a value")
    options = {key: values[0] for key, values in query.items()}
    endpoint = options.get("endpoint_url")
    if endpoint is not None:
        endpoint_parts = urlsplit(endpoint)
        if endpoint_parts.scheme not in ("http", "https") or not endpoint_parts.hostname:
            raise _refuse("endpoint_url must be an http:// or https:// URL")
    style = options.get("addressing_style", "path" if endpoint else None)
    if style not in (None, "path", "virtual", "auto"):
        raise _refuse("addressing_style must be path, virtual or auto")
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": parts.netloc,
            "endpoint_url": endpoint,
            "region_name": options.get("region"),
            "addressing_style": style,
            "signature_version": "s3v4",
            "querystring_auth": True,
            "querystring_expire": expire_seconds,
            "file_overwrite": False,  # as on disk: a name already taken gets another, nothing is replaced
            "default_acl": None,  # the bucket's own (private): playback goes through presigned URLs
        },
    }


def storage_origins(url: str) -> list[str]:
    """The origin playback URLs point at when `url` names an S3-compatible server (for the pages' media-src); none
    for AWS itself (CSP_MEDIA_SRC names the bucket's) or an unparseable URL (refused at start anyway)."""
    try:
        endpoint = s3_storage(url, expire_seconds=1)["OPTIONS"]["endpoint_url"] if url else None
    except ImproperlyConfigured:
        return []
    if not endpoint:
        return []
    parts = urlsplit(endpoint)
    return [f"{parts.scheme}://{parts.netloc}"]
