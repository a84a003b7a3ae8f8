"""One contract for the webhook store (core.webhook_ports.WebhookStore) on SQLite, Cosmos DB (emulator) and
memory: endpoints, their rotations and health kept apart, deliveries stored once per endpoint and event."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid

import pytest

from backends.cosmos.webhooks import CosmosWebhookStore
from backends.memory.webhooks import MemoryWebhookStore
from backends.sqlite.webhooks import SqliteWebhookStore
from core.webhooks import (
    DELIVERED,
    DELIVERY_KEPT_DAYS,
    PENDING,
    Attempt,
    SigningSecret,
    WebhookDelivery,
    WebhookEndpoint,
)

NOW = dt.datetime(2026, 11, 21, 3, 0, tzinfo=dt.UTC)


@pytest.fixture(params=["sqlite", "cosmos", "memory"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SqliteWebhookStore(tmp_path)
    if request.param == "memory":
        return MemoryWebhookStore()
    cosmos = request.getfixturevalue("cosmos_storage")
    database = cosmos._containers.partners.container_link.split("/")[1]  # "dbs/<name>/colls/partners"
    return CosmosWebhookStore.of_database(cosmos.client, database)


def partner() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


def endpoint(partner_id: str, number: int = 1, **changes) -> WebhookEndpoint:
    made = WebhookEndpoint(
        partner_id,
        f"ep_{number}",
        f"https://hooks.example/{number}?a=b",
        (SigningSecret("whsec_AAAA"),),
        NOW + dt.timedelta(seconds=number),
    )
    return dataclasses.replace(made, **changes)


def delivery(partner_id: str, event: str, minutes: int = 0, **changes) -> WebhookDelivery:
    made = WebhookDelivery(
        partner_id,
        "ep_1",
        event,
        "daily_close.reconciled",
        '{"data":{"store_id":"店-1"}}',
        NOW + dt.timedelta(minutes=minutes),
        next_attempt_at=NOW,
    )
    return dataclasses.replace(made, **changes)


def test_endpoints_are_kept_per_partner_oldest_first(store):
    one, other = partner(), partner()
    store.add_endpoint(endpoint(one, 2))
    store.add_endpoint(endpoint(one, 1))
    store.add_endpoint(endpoint(other, 1))
    assert [e.endpoint_id for e in store.endpoints(one)] == ["ep_1", "ep_2"]
    assert store.endpoint(one, "ep_2") == endpoint(one, 2)
    assert store.endpoint(one, "ep_9") is None
    assert store.remove_endpoint(one, "ep_2") and not store.remove_endpoint(one, "ep_2")
    assert [e.endpoint_id for e in store.endpoints(one)] == ["ep_1"]
    assert len(store.endpoints(other)) == 1


def test_a_rotation_and_the_endpoints_health_do_not_undo_each_other(store):
    one = partner()
    store.add_endpoint(endpoint(one))
    read_before = store.endpoint(one, "ep_1")
    store.set_health(one, "ep_1", active=True, failing_since=NOW)
    rotated = (SigningSecret("whsec_AAAA", NOW + dt.timedelta(days=1)), SigningSecret("whsec_BBBB"))
    store.replace_secrets(dataclasses.replace(read_before, secrets=rotated))  # from an older read
    stored = store.endpoint(one, "ep_1")
    assert stored.secrets == rotated and stored.failing_since == NOW and stored.active
    store.set_health(one, "ep_1", active=False, failing_since=NOW)
    disabled = store.endpoint(one, "ep_1")
    assert not disabled.active and disabled.disabled_at is not None and disabled.secrets == rotated
    store.set_health(one, "ep_1", active=True, failing_since=None)
    enabled = store.endpoint(one, "ep_1")
    assert enabled.active and enabled.disabled_at is None and enabled.failing_since is None


def test_a_delivery_is_stored_once_per_endpoint_and_event(store):
    one = partner()
    first = delivery(one, "msg_1")
    assert store.add_delivery(first) == first
    assert store.add_delivery(dataclasses.replace(first, body="{}")) == first  # published again: the first stays
    attempted = dataclasses.replace(
        first, state=DELIVERED, attempts=(Attempt(NOW, 500, "500"), Attempt(NOW, None, "timeout")), next_attempt_at=None
    )
    store.save_delivery(attempted)
    assert store.delivery(one, "ep_1", "msg_1") == attempted
    assert store.add_delivery(first) == attempted
    assert store.delivery(one, "ep_2", "msg_1") is None


def test_deliveries_newest_first_within_the_limit(store):
    one = partner()
    for minutes in range(5):
        store.add_delivery(delivery(one, f"msg_{minutes}", minutes))
    store.add_delivery(delivery(partner(), "msg_x", 9))
    latest = store.deliveries(one, 3)
    assert [d.event_id for d in latest] == ["msg_4", "msg_3", "msg_2"]
    assert all(d.state == PENDING for d in latest)


def test_sqlite_deliveries_past_the_kept_days_leave_as_new_ones_come(tmp_path):
    """Cosmos DB expires them by their ttl (not modelled by the emulator); SQLite deletes them."""
    store = SqliteWebhookStore(tmp_path)
    one = partner()
    store.add_delivery(delivery(one, "msg_old", -(DELIVERY_KEPT_DAYS + 1) * 24 * 60))
    store.add_delivery(delivery(one, "msg_new"))
    assert [d.event_id for d in store.deliveries(one, 10)] == ["msg_new"]
