"""The client's address, as the brakes count it: REMOTE_ADDR, unless the request came through proxies this
deployment trusts (TRUSTED_PROXY_COUNT, or TRUSTED_PROXIES: addresses and networks), in which case it is read from
X-Forwarded-For, right to left, skipping exactly the trusted hops. Off by default: a forged X-Forwarded-For from a
client is then ignored, and behind an unconfigured proxy every client shares the proxy's address (the README says
to configure it)."""

import ipaddress
from functools import cache

from django.conf import settings


@cache
def _networks(proxies: tuple[str, ...]):
    return tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies if p.strip())


def _trusted(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_address(request) -> str:
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    count = settings.TRUSTED_PROXY_COUNT
    if count:
        # The last `count` hops are our proxies: REMOTE_ADDR is the nearest, the others appended their peers.
        chain = [*forwarded, remote]
        return chain[-(count + 1)] if len(chain) > count else chain[0]
    if settings.TRUSTED_PROXIES and _trusted(remote):
        chain = [*forwarded, remote]
        while len(chain) > 1 and _trusted(chain[-1]):
            chain.pop()
        return chain[-1]
    return remote


def address_bucket(address: str) -> str:
    """What a per-address brake counts for a client address: itself, or an IPv6 address's /64 (one subscriber's
    network, which hands its hosts any of 2^64 addresses). An IPv4-mapped IPv6 address counts as its IPv4 address."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)
