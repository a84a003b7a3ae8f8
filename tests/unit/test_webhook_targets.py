"""Where a webhook may go (core/webhook_addresses.py) and the sender's checks at connection time
(backends/webhook_http.py): a name that resolved to a public address at registration and to a private
one now is refused, and nothing is sent (decision 0104)."""

from __future__ import annotations

import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backends.webhook_http import HttpWebhookSender, retry_after_seconds
from core.webhook_addresses import TargetRefused, address_refusal, checked_url
from core.webhook_settings import DEFAULT_RETRY_SECONDS, WebhookSettings


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.0.1", "a private address"),
        ("fd12::1", "a private address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("168.63.129.16", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("169.254.10.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("::ffff:192.168.0.1", "a private address"),
        ("100.64.0.1", "not a public address"),
        ("0.0.0.0", "a private address"),
        ("224.0.0.1", "not a public address"),
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("20.50.2.1", None),
        ("2606:4700::1111", None),
    ],
)
def test_only_public_addresses_are_allowed(address, reason):
    assert address_refusal(ipaddress.ip_address(address), allow_loopback=False) == reason


def test_loopback_allowed_by_the_setting_but_never_private_or_link_local():
    assert address_refusal(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    assert address_refusal(ipaddress.ip_address("10.0.0.1"), allow_loopback=True) == "a private address"
    assert address_refusal(ipaddress.ip_address("169.254.169.254"), allow_loopback=True) is not None


@pytest.mark.parametrize(
    "url", ["http://example.com/x", "ftp://example.com/x", "https://u:p@example.com/", "https://example.com/#f", "nope"]
)
def test_urls_refused(url):
    with pytest.raises(TargetRefused):
        checked_url(url, allow_loopback=False)


def test_plain_http_reaches_loopback_only():
    sender = HttpWebhookSender(1, allow_loopback=True, resolver=lambda host, port: [ipaddress.ip_address("20.50.2.1")])
    with pytest.raises(TargetRefused, match="loopback"):
        sender.check_target("http://partner.example/hook")
    sender.check_target("https://partner.example/hook")


class _Counting(BaseHTTPRequestHandler):
    hits = 0

    def do_POST(self):
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_name_rebound_to_a_private_address_after_registration_is_refused_at_connection_time():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    answers = iter([[ipaddress.ip_address("127.0.0.1")], [ipaddress.ip_address("10.0.0.7")]])
    sender = HttpWebhookSender(1, allow_loopback=True, resolver=lambda host, p: next(answers))
    try:
        url = f"http://rebinding.example:{port}/hook"
        sender.check_target(url)  # registration: loopback, allowed here
        result = sender.post(url, {}, b"{}")  # connection: the name now answers a private address
        assert result.refused and result.status_code is None and "private" in result.outcome
        assert _Counting.hits == 0
    finally:
        server.shutdown()
        server.server_close()


def test_the_sender_connects_to_the_address_it_checked():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sender = HttpWebhookSender(1, allow_loopback=True, resolver=lambda host, p: [ipaddress.ip_address("127.0.0.1")])
    try:
        before = _Counting.hits
        result = sender.post(f"http://any-name.invalid:{server.server_address[1]}/hook", {}, b"{}")
        assert result.status_code == 200 and _Counting.hits == before + 1
    finally:
        server.shutdown()
        server.server_close()


def test_retry_after_in_seconds_or_as_a_date():
    import datetime as dt

    now = dt.datetime(2026, 11, 21, 3, 0, tzinfo=dt.UTC)
    assert retry_after_seconds("120", now) == 120
    assert retry_after_seconds("Sat, 21 Nov 2026 03:01:00 GMT", now) == 60
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None


def test_the_retry_schedule_setting():
    assert sum(DEFAULT_RETRY_SECONDS) > 24 * 3600
    assert WebhookSettings.from_env({"WEBHOOK_RETRY_SECONDS": "1, 2,3"}).retry_seconds == (1, 2, 3)
    assert WebhookSettings.from_env({}).retry_seconds == DEFAULT_RETRY_SECONDS
    with pytest.raises(ValueError, match="WEBHOOK_RETRY_SECONDS"):
        WebhookSettings.from_env({"WEBHOOK_RETRY_SECONDS": "1,x"})
    assert WebhookSettings.from_env({"WEBHOOK_ALLOW_LOOPBACK": "true"}).allow_loopback
