"""The delivery use case (ingest/webhooks/delivery.py) driven directly: the in-memory store, the real SQLite
queue and the real sender against a loopback receiver. Which answers are retried and when, a repeated or
returning message, an endpoint failing for days disabled (decision 0106)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging

import pytest

from backends.memory.webhooks import MemoryWebhookStore
from backends.sqlite.delayed_queue import SqliteQueue
from backends.webhook_http import HttpWebhookSender
from core.webhook_ports import SendResult
from core.webhook_settings import WebhookSettings
from core.webhooks import DELIVERED, FAILED, PENDING, DeliveryMessage, SigningSecret, WebhookEndpoint
from ingest.webhooks import delivery
from ingest.webhooks.events import publish_ping
from tests.webhook_receiver import Receiver

SETTINGS = WebhookSettings(retry_seconds=(0, 0, 0), timeout_seconds=1, disable_after_seconds=3600, allow_loopback=True)
SECRET = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODk="


@pytest.fixture
def parts(tmp_path):
    store, queue = MemoryWebhookStore(), SqliteQueue(tmp_path, "webhook-deliveries")
    receivers: list[Receiver] = []

    def endpoint(script: list[str], then: str = "200") -> tuple[WebhookEndpoint, Receiver]:
        receiver = Receiver(script, then=then, timeout_hold=1.5)
        receivers.append(receiver)
        made = WebhookEndpoint(
            "p1", f"ep_{len(receivers)}", receiver.url, (SigningSecret(SECRET),), dt.datetime.now(dt.UTC)
        )
        store.add_endpoint(made)
        return made, receiver

    yield store, queue, endpoint
    for receiver in receivers:
        receiver.close()


def run_queue(store, queue, settings=SETTINGS, now=None) -> int:
    """Run every visible message as the trigger would; returns how many ran."""
    ran = 0
    while (message := queue.receive(30)) is not None:
        delivery.deliver(
            store,
            queue,
            HttpWebhookSender(1, True),
            settings,
            DeliveryMessage.decode(message.body),
            message.dequeue_count,
            now,
        )
        queue.delete(message)
        ran += 1
    return ran


def test_a_4xx_other_than_429_is_not_retried(parts):
    store, queue, endpoint = parts
    made, receiver = endpoint(["404"])
    event = publish_ping(store, queue, made)
    run_queue(store, queue)
    stored = store.delivery("p1", made.endpoint_id, event)
    assert stored.state == FAILED and [a.status_code for a in stored.attempts] == [404]
    assert len(receiver.received) == 1


def test_429_waits_as_long_as_retry_after_says(parts):
    store, queue, endpoint = parts
    made, _ = endpoint([])
    event = publish_ping(store, queue, made)
    now = dt.datetime.now(dt.UTC)
    stored = store.delivery("p1", made.endpoint_id, event)
    result = delivery._after(stored, SendResult(429, "429", 120.0), SETTINGS, now)
    assert result.state == PENDING and result.next_attempt_at == now + dt.timedelta(seconds=120)
    result = delivery._after(stored, SendResult(503, "503", None), SETTINGS, now)
    assert result.next_attempt_at == now  # the schedule's first wait, 0 here


def test_the_schedule_ends_and_the_delivery_fails(parts):
    store, queue, endpoint = parts
    made, receiver = endpoint([], then="500")
    event = publish_ping(store, queue, made)
    run_queue(store, queue)
    stored = store.delivery("p1", made.endpoint_id, event)
    assert stored.state == FAILED and [a.status_code for a in stored.attempts] == [500] * 4  # 1 + 3 retries
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1


def test_a_repeated_message_is_dropped_and_a_returning_one_sends_the_next(parts):
    store, queue, endpoint = parts
    made, receiver = endpoint(["500"])
    event = publish_ping(store, queue, made)
    message = queue.receive(30)
    first = DeliveryMessage.decode(message.body)
    sender = HttpWebhookSender(1, True)
    delivery.deliver(store, queue, sender, SETTINGS, first, 1)  # attempt 1 (500), attempt 2 queued
    queue.delete(message)
    delivery.deliver(store, queue, sender, SETTINGS, first, 1)  # a duplicate of message 1: dropped
    delivery.deliver(store, queue, sender, SETTINGS, first, 2)  # message 1 back after a crash: resends 2
    assert len(receiver.received) == 1
    assert run_queue(store, queue) == 2  # two copies of message 2: one attempt, one dropped
    stored = store.delivery("p1", made.endpoint_id, event)
    assert stored.state == DELIVERED and [a.status_code for a in stored.attempts] == [500, 200]
    assert len(receiver.received) == 2


def test_an_endpoint_failing_for_longer_than_the_setting_is_disabled_and_hq_told(parts, caplog):
    store, queue, endpoint = parts
    made, receiver = endpoint([], then="503")
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
    store.set_health("p1", made.endpoint_id, active=True, failing_since=long_ago)
    event = publish_ping(store, queue, made)
    with caplog.at_level(logging.ERROR, logger="pos.webhooks"):
        run_queue(store, queue)
    assert any(delivery.DISABLED_LOG in record.getMessage() for record in caplog.records)
    disabled = store.endpoint("p1", made.endpoint_id)
    assert not disabled.active and disabled.disabled_at is not None
    stored = store.delivery("p1", made.endpoint_id, event)
    assert stored.state == FAILED and stored.attempts[-1].outcome == "endpoint disabled"


def test_one_partners_failing_endpoint_does_not_hold_back_anothers(parts):
    store, queue, endpoint = parts
    failing, _ = endpoint([], then="timeout")
    working, receiver = endpoint([])
    store.add_endpoint(dataclasses.replace(working, partner_id="p2"))
    slow = publish_ping(store, queue, failing)
    fast = publish_ping(store, queue, dataclasses.replace(working, partner_id="p2"))
    settings = dataclasses.replace(SETTINGS, retry_seconds=(3600,))
    run_queue(store, queue, settings)
    assert store.delivery("p2", working.endpoint_id, fast).state == DELIVERED
    waiting = store.delivery("p1", failing.endpoint_id, slow)
    assert waiting.state == PENDING and waiting.attempts[0].outcome == "timeout"
    assert receiver.received
