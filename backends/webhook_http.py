"""Sending one webhook request (core.webhook_ports.WebhookSender), with the standard library's HTTP client.

The name is resolved once per attempt, every address it gives is checked (core/webhook_addresses.py), and
the connection goes to an address so checked: there is no second lookup for a rebinding name to answer
differently. TLS still verifies the certificate against the URL's host name (SNI). Redirects are not
followed. Decision 0104."""

from __future__ import annotations

import datetime as dt
import email.utils
import http.client
import ipaddress
import socket
import ssl
from collections.abc import Callable
from urllib.parse import urlsplit

import certifi

from core.webhook_addresses import Address, TargetRefused, addresses_refusal, checked_url
from core.webhook_ports import SendResult

RESPONSE_BYTES_READ = 64 * 1024  # the answer's body is read (so the connection ends cleanly), then dropped

Resolver = Callable[[str, int], list[Address]]


def resolve(host: str, port: int) -> list[Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return []
    return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))


def retry_after_seconds(value: str | None, now: dt.datetime) -> float | None:
    """Retry-After as seconds, or as an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - now).total_seconds())


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: Address, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((str(self._address), self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, address: Address, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection((str(self._address), self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


class HttpWebhookSender:  # core.webhook_ports.WebhookSender
    def __init__(self, timeout_seconds: float, allow_loopback: bool, resolver: Resolver = resolve) -> None:
        self.timeout = timeout_seconds
        self.allow_loopback = allow_loopback
        self._resolve = resolver
        self._tls = ssl.create_default_context(cafile=certifi.where())

    def _target(self, url: str) -> tuple[str, str, int, Address]:
        scheme, host, port = checked_url(url, self.allow_loopback)
        addresses = self._resolve(host, port)
        reason = addresses_refusal(scheme, addresses, self.allow_loopback)
        if reason is not None:
            raise TargetRefused(f"{host} resolves to {reason}")
        return scheme, host, port, addresses[0]

    def check_target(self, url: str) -> None:
        self._target(url)

    def post(self, url: str, headers: dict[str, str], body: bytes) -> SendResult:
        try:
            scheme, host, port, address = self._target(url)
        except TargetRefused as refused:
            return SendResult(None, f"address refused: {refused}", refused=True)
        connection: http.client.HTTPConnection = (
            _PinnedHTTPSConnection(host, port, address, self.timeout, self._tls)
            if scheme == "https"
            else _PinnedHTTPConnection(host, port, address, self.timeout)
        )
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            connection.request("POST", target, body=body, headers=headers)
            response = connection.getresponse()
            response.read(RESPONSE_BYTES_READ)
            wait = retry_after_seconds(response.getheader("Retry-After"), dt.datetime.now(dt.UTC))
            return SendResult(response.status, str(response.status), wait)
        except TimeoutError:
            return SendResult(None, "timeout")
        except ssl.SSLError as error:
            return SendResult(None, f"TLS failed: {type(error).__name__}")
        except (OSError, http.client.HTTPException) as error:
            return SendResult(None, f"connection failed: {type(error).__name__}")
        finally:
            connection.close()
