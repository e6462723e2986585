"""SSRF defence: which URLs a subscription may have, and an HTTP adapter that connects only to the vetted address.

The same address rules run at create/update (`validate_url`) and at every delivery (`pin_address`, used by
`transport.post` to choose the one address it connects to), on the
address actually connected to, so a DNS answer that changes between the two is still caught. `resolve_host`
is the one DNS edge (tests patch it there).

A refusal names the kind of address, never the address: the messages reach key holders (the 400, a delivery
attempt's error), who could otherwise map internal DNS by pointing names at it.
"""

import contextlib
import ipaddress
import re
import socket
from urllib.parse import urlsplit

from django.conf import settings
from requests_hardened.ip_filter import EXTRA_BLOCKED_NET_RANGES

MAX_URL_LENGTH = 2048
# RFC 3986's characters (unreserved, reserved and %): what the schema's `format: uri` admits. An international host
# name or path is sent in its ASCII form (punycode, percent-encoding), which is also what the sender connects to.
URI_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
ASCII_ONLY = "Enter a valid URL in its ASCII form (punycode for an international host name, %-encoding in the path)."
# Cloud metadata endpoints that are not all inside a range blocked anyway (AWS, GCP, Azure, Alibaba, Oracle, AWS v6).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254")
)
# Deprecated site-local IPv6 (RFC 3879): not in Python's private or reserved ranges, yet routed inside sites.
SITE_LOCAL_NETWORK = ipaddress.ip_network("fec0::/10")
# Private ranges WEBHOOK_ALLOW_LOCAL_URLS may open (a developer's LAN); everything else stays blocked.
LOCAL_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
)


class DeliveryRefused(Exception):
    """A delivery that must not be attempted: nothing was sent."""


class BlockedAddress(DeliveryRefused):
    """The host resolved to an address webhooks must not reach."""


class UnresolvableHost(DeliveryRefused):
    """The host did not resolve."""


def resolve_host(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (raises socket.gaierror when it does not resolve). The DNS edge.

    An address literal in its canonical form is its own answer, without a getaddrinfo call per POST (it showed in a
    drain's profile: docs/benchmarks.md#figures-behind-the-code); any other spelling (`127.1`, a scope id) still goes
    to getaddrinfo."""
    with contextlib.suppress(ValueError):
        if str(ipaddress.ip_address(host)) == host:
            return [host]
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def address_problem(address: str, *, allow_local: bool) -> str | None:
    """Why `address` may not be reached (a phrase), or None when it may."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return "an IPv4-mapped IPv6 address"
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return None if allow_local else "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip in SITE_LOCAL_NETWORK:
        return "a site-local address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_unspecified:
        return "an unspecified address"
    if any(ip in net for net in LOCAL_NETWORKS):
        return None if allow_local else "a private address"
    if ip.is_private or ip.is_reserved or not ip.is_global or any(ip in net for net in EXTRA_BLOCKED_NET_RANGES):
        return "a reserved address"
    return None


def _is_local(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return ip.is_loopback or any(ip in net for net in LOCAL_NETWORKS)


def validate_url(url: str) -> list[str]:
    """Problems with a subscription URL (empty list when acceptable). A name that does not resolve is accepted."""
    allow_local = settings.WEBHOOK_ALLOW_LOCAL_URLS
    if len(url) > MAX_URL_LENGTH:
        return [f"Ensure this field has no more than {MAX_URL_LENGTH} characters."]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ["Enter a valid URL."]
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return ["Enter a valid https:// URL."]
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return ["The URL must not contain credentials."]
    if any(ch.isspace() for ch in url):
        return ["Enter a valid URL."]
    if not URI_CHARACTERS.fullmatch(url):
        return [ASCII_ONLY]
    if "%" in parts.hostname:
        # A zone id (`[fe80::1%25eth0]`) picks one of our network interfaces; no public receiver needs one.
        return ["Enter a valid URL: the host must not carry a zone id (%25...)."]
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = resolve_host(parts.hostname, port)
    except (socket.gaierror, UnicodeError, OSError):
        addresses = []
    if parts.scheme == "http" and not (allow_local and addresses and all(_is_local(a) for a in addresses)):
        return ["The URL must use https://."]
    problems = [problem for address in addresses if (problem := address_problem(address, allow_local=allow_local))]
    return [f"The host resolves to {problem}, which webhooks may not reach." for problem in dict.fromkeys(problems)]


def pin_address(host: str, port: int, *, scheme: str) -> str:
    """The vetted address to connect to: every resolved address must pass, then the first is used."""
    allow_local = settings.WEBHOOK_ALLOW_LOCAL_URLS
    try:
        addresses = resolve_host(host, port)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise UnresolvableHost(f"Could not resolve {host}") from exc
    if not addresses:
        raise UnresolvableHost(f"Could not resolve {host}")
    for address in addresses:
        if problem := address_problem(address, allow_local=allow_local):
            raise BlockedAddress(f"{host} resolves to {problem}; not connecting")
    if scheme == "http" and not (allow_local and all(_is_local(a) for a in addresses)):
        raise BlockedAddress("http:// is allowed only to local receivers with WEBHOOK_ALLOW_LOCAL_URLS")
    return addresses[0]



def masked_url(url: str) -> str:
    """`url` as shown to whoever may know where events go but not the rest: scheme, host and port, and `/…` for
    any path, query or credentials beyond them (a receiver's path or query often carries a token). The dashboard's
    non-admins and the audit trail see this; admins and API keys the whole URL."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return "…"
    if ":" in host:
        host = f"[{host}]"
    where = f"{parts.scheme}://{host}{f':{port}' if port else ''}"
    hidden = parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password
    return f"{where}/…" if hidden else f"{where}/"
