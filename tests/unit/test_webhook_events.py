"""Publishing events (ingest/webhooks/events.py): one delivery per active endpoint, its first attempt queued;
published again (after a crash), the same event id and no second delivery (decision 0106)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

from backends.memory.webhooks import MemoryWebhookStore
from backends.sqlite.delayed_queue import SqliteQueue
from core.records import ClosedDay
from core.webhooks import DeliveryMessage, SigningSecret, WebhookEndpoint
from ingest.webhooks.events import publish_overdue, publish_result

NOW = dt.datetime(2026, 11, 21, 3, 0, tzinfo=dt.UTC)
TOTALS = {
    "trade_record_count": 1,
    "item_row_count": 1,
    "payment_row_count": 1,
    "net_sales_amount": "1200",
    "tax_amount": "120",
    "tip_amount": "0",
    "payment_total_amount": "1320",
}
DAY = ClosedDay("東京/01", dt.date(2026, 11, 20), "b-1", "JPY", {**TOTALS, "batch_count": 1}, NOW, NOW, "RECEIVED")
RESULT = dataclasses.replace(DAY, status="MATCHED", checked_at=NOW + dt.timedelta(minutes=15), actual=TOTALS)


def endpoints(store: MemoryWebhookStore, *active: bool) -> None:
    for number, is_active in enumerate(active):
        store.add_endpoint(
            WebhookEndpoint("p1", f"ep_{number}", "https://x.example/", (SigningSecret("whsec_AA=="),), NOW, is_active)
        )


def messages(queue: SqliteQueue) -> list[DeliveryMessage]:
    found = []
    while (message := queue.receive(30)) is not None:
        found.append(DeliveryMessage.decode(message.body))
        queue.delete(message)
    return found


def test_a_result_is_one_delivery_per_active_endpoint_with_the_status_reads_body(tmp_path):
    store, queue = MemoryWebhookStore(), SqliteQueue(tmp_path, "webhook-deliveries")
    endpoints(store, True, False, True)
    assert publish_result(store, queue, "p1", RESULT) == 2
    sent = messages(queue)
    assert {m.endpoint_id for m in sent} == {"ep_0", "ep_2"} and {m.attempt for m in sent} == {1}
    assert len({m.event_id for m in sent}) == 1
    delivery = store.delivery("p1", "ep_0", sent[0].event_id)
    event = json.loads(delivery.body)
    assert event["type"] == "daily_close.reconciled" and event["timestamp"] == "2026-11-21T03:15:00Z"
    assert event["data"]["store_id"] == "東京/01" and event["data"]["status"] == "MATCHED"
    assert event["data"]["checked_at"] == "2026-11-21T03:15:00Z"


def test_published_again_it_is_the_same_event_queued_again_only_while_not_attempted(tmp_path):
    store, queue = MemoryWebhookStore(), SqliteQueue(tmp_path, "webhook-deliveries")
    endpoints(store, True)
    publish_result(store, queue, "p1", RESULT)
    publish_result(store, queue, "p1", RESULT)  # the worker died after publishing: its message came back
    first, again = messages(queue)
    assert first == again  # a duplicate message: the delivery drops the second by its attempt number
    assert len(store.deliveries("p1", 10)) == 1
    later = dataclasses.replace(RESULT, checked_at=RESULT.checked_at + dt.timedelta(hours=1))
    publish_result(store, queue, "p1", later)  # a new result is a new event
    assert messages(queue)[0].event_id != first.event_id


def test_an_overdue_close_and_a_close_without_result(tmp_path):
    store, queue = MemoryWebhookStore(), SqliteQueue(tmp_path, "webhook-deliveries")
    endpoints(store, True)
    assert publish_result(store, queue, "p1", DAY) == 0  # RECEIVED: nothing to tell
    assert publish_overdue(store, queue, "p1", DAY, NOW + dt.timedelta(minutes=20)) == 1
    [sent] = messages(queue)
    event = json.loads(store.delivery("p1", "ep_0", sent.event_id).body)
    assert event["type"] == "daily_close.overdue" and event["data"]["status"] == "RECEIVED"
    assert event["data"]["reconciliation_due_at"] == "2026-11-21T03:00:00Z"
