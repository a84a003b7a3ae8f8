"""Where a webhook may go: the addresses and URLs refused, without any I/O (the adapter resolves the name
and connects to the address checked here: backends/webhook_http.py). Decision 0104."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata and platform endpoints that are not link-local (Azure's wire server, AWS's IPv6 one).
_METADATA = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "168.63.129.16", "fd00:ec2::254"))


class TargetRefused(ValueError):
    """A webhook URL or the address it resolves to that the service will not send to."""


def address_refusal(address: Address, allow_loopback: bool) -> str | None:
    """Why the address is refused, or None. Only public unicast addresses are allowed; loopback too when
    WEBHOOK_ALLOW_LOOPBACK is true (local development and tests), never private or link-local ones."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_loopback:
        return None if allow_loopback else "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_private:
        return "a private address"
    if address.is_multicast or address.is_unspecified or address.is_reserved or not address.is_global:
        return "not a public address"
    return None


def checked_url(url: str, allow_loopback: bool) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL a webhook may name: https (http only with WEBHOOK_ALLOW_LOOPBACK, and
    then only to loopback addresses, which the caller checks), no user or password, no fragment."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise TargetRefused(f"not a URL: {error}") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise TargetRefused("a webhook URL must be https://host/...")
    if parts.scheme == "http" and not allow_loopback:
        raise TargetRefused("a webhook URL must use https")
    if parts.username is not None or parts.password is not None or parts.fragment:
        raise TargetRefused("a webhook URL may not hold a user, a password or a fragment")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def addresses_refusal(scheme: str, addresses: list[Address], allow_loopback: bool) -> str | None:
    """Why the addresses a name resolved to are refused: any refused one refuses them all (a name may
    answer another address next time), and plain http only ever reaches loopback."""
    if not addresses:
        return "the name does not resolve"
    for address in addresses:
        reason = address_refusal(address, allow_loopback)
        if reason is not None:
            return reason
        if scheme == "http" and not address.is_loopback:
            return "plain http only reaches a loopback address"
    return None
