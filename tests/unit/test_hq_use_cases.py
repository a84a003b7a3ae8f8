"""HQ's use cases without the command line (decision 0077): onboarding (ingest/onboarding.py), the
reconciliation operations (reconcile/operations.py) and the queue's consumer side, on the real SQLite
adapters in a temporary directory. The command line's wording of them is tested in test_cli.py and
test_hq_operations.py."""

from __future__ import annotations

import datetime as dt
import inspect
import uuid

import pytest

from backends.azure_queue import AzureQueue
from backends.sqlite.delayed_queue import SqliteQueue
from backends.sqlite.storage import SqliteStorage
from core.ports import AdminError
from core.queue_ports import QueueConsumer
from core.records import BatchMarker, ClosedDay
from ingest import onboarding
from reconcile import operations

UTC = dt.UTC
NOW = dt.datetime(2026, 11, 21, 4, 5, tzinfo=UTC)
DAY = dt.date(2026, 11, 20)


@pytest.fixture
def storage(tmp_path) -> SqliteStorage:
    return SqliteStorage(tmp_path)


def partner_with_stores(storage, partner_id: str = "acme", stores: tuple[str, ...] = ("S1", "S2")):
    partner = onboarding.add_partner(storage, partner_id, partner_id.title(), NOW)
    onboarding.register_stores(storage, partner_id, list(stores), NOW)
    return partner


# The totals of a day without trade records, as its daily close states them.
NOTHING_SOLD = {
    "batch_count": 1,
    "trade_record_count": 0,
    "item_row_count": 0,
    "payment_row_count": 0,
    **{name: "0.00" for name in ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")},
}


def close(
    storage, partner_id: str, store_id: str, day: dt.date, status: str = "RECEIVED", details: dict | None = None
) -> ClosedDay:
    received = ClosedDay(
        store_id, day, str(uuid.uuid4()), "USD", NOTHING_SOLD, NOW, NOW + dt.timedelta(days=365), "RECEIVED"
    )
    marker = BatchMarker(partner_id, received.close_batch_id, "daily-close", 1, "digest", NOW, store_id, day)
    assert storage.save_daily_close(marker, received) is None
    if status == "RECEIVED":
        return received
    result = ClosedDay(
        store_id,
        day,
        received.close_batch_id,
        "USD",
        NOTHING_SOLD,
        NOW,
        received.due_at,
        status,
        NOW,
        {},
        [],
        details or {},
    )
    assert storage.save_result(partner_id, result)
    return result


# --- onboarding ----------------------------------------------------------------------------------


def test_adding_an_existing_partner_is_refused_with_the_partner_it_found(storage):
    onboarding.add_partner(storage, "acme", "Acme", NOW)
    with pytest.raises(onboarding.PartnerExists) as refused:
        onboarding.add_partner(storage, "acme", "Other name", NOW)
    assert refused.value.partner.name == "Acme" and storage.get_partner("acme").name == "Acme"


@pytest.mark.parametrize("partner_id", ["acme pos", "a/b", ""])
def test_an_invalid_partner_id_is_refused_before_anything_is_written(storage, partner_id):
    with pytest.raises(AdminError, match="invalid partner id"):
        onboarding.add_partner(storage, partner_id, "x", NOW)
    assert storage.list_partners() == []


def test_registering_returns_only_the_stores_it_registered(storage):
    partner_with_stores(storage, stores=("S1",))
    assert onboarding.register_stores(storage, "acme", ["S1", "S2", "S3"], NOW) == ["S2", "S3"]
    assert onboarding.register_stores(storage, "acme", ["S2"], NOW) == []
    assert storage.registered_stores("acme") == ["S1", "S2", "S3"]


def test_a_key_pasted_in_place_of_its_id_names_its_owner_and_revokes_nothing(storage):
    partner_with_stores(storage)
    key = onboarding.issue_key(storage, "acme", NOW)
    assert storage.find_key(key.key_hash).key_id == key.key_id
    with pytest.raises(onboarding.NotAKeyId) as refused:
        onboarding.revoke_key(storage, "acme", key.secret, NOW)
    assert refused.value.owner.key_id == key.key_id and key.secret not in str(refused.value)
    with pytest.raises(onboarding.NotAKeyId) as refused:
        onboarding.revoke_key(storage, "acme", "not-a-key", NOW)
    assert refused.value.owner is None
    assert not storage.find_key(key.key_hash).revoked
    onboarding.revoke_key(storage, "acme", key.key_id, NOW)
    assert storage.find_key(key.key_hash).revoked


# --- reconciliation operations -------------------------------------------------------------------


def test_closes_of_one_partner_or_of_every_partner_with_filters(storage):
    acme = partner_with_stores(storage)
    partner_with_stores(storage, "other", ("S1",))
    close(storage, "acme", "S1", DAY, "MATCHED")
    close(storage, "acme", "S2", DAY + dt.timedelta(days=1))
    close(storage, "other", "S1", DAY, "MISMATCHED")

    def listed(*args, **filters):
        return [
            (partner_id, day.store_id, day.business_date)
            for partner_id, day in operations.closes(storage, *args, **filters)
        ]

    assert listed(acme) == [("acme", "S1", DAY), ("acme", "S2", DAY + dt.timedelta(days=1))]
    assert sorted(listed(None, first=DAY, last=DAY)) == [("acme", "S1", DAY), ("other", "S1", DAY)]
    assert listed(None, "MISMATCHED") == [("other", "S1", DAY)]
    assert listed(acme, store_id="S2") == [("acme", "S2", DAY + dt.timedelta(days=1))]


def test_latest_close_says_whether_a_store_without_one_is_registered(storage):
    partner_with_stores(storage)
    stored = close(storage, "acme", "S1", DAY)
    assert operations.latest_close(storage, "acme", "S1", DAY).close_batch_id == stored.close_batch_id
    with pytest.raises(operations.NoDailyClose) as registered:
        operations.latest_close(storage, "acme", "S2", DAY)
    with pytest.raises(operations.NoDailyClose) as unknown:
        operations.latest_close(storage, "acme", "S9", DAY)
    assert registered.value.registered and not unknown.value.registered


def test_reconcile_now_gives_a_received_day_its_result(storage):
    partner_with_stores(storage)
    close(storage, "acme", "S1", DAY)
    operations.reconcile_now(storage, "acme", "S1", DAY)
    assert operations.latest_close(storage, "acme", "S1", DAY).status == "MATCHED"


def test_setting_a_direction_names_the_reconciled_days_to_run_again(storage):
    partner_with_stores(storage)
    left_out = close(storage, "acme", "S1", DAY, "MISMATCHED", {"unknown_payment_types": ["VOUCHER"]})
    close(storage, "acme", "S2", DAY, "MATCHED", {"unknown_payment_types": ["GIFT"]})
    close(storage, "acme", "S2", DAY + dt.timedelta(days=1))  # not reconciled yet: it will count VOUCHER

    first = operations.set_direction(storage, "acme", "VOUCHER", -1)
    assert (first.previous, first.suggested) == (None, None)
    assert [(day.store_id, day.business_date) for day in first.days_left_out] == [(left_out.store_id, DAY)]
    again = operations.set_direction(storage, "acme", "VOUCHER", 1)
    assert again.previous == -1
    assert operations.set_direction(storage, "acme", "ADJUSTMENT", -1).suggested == 1


def test_directions_in_effect_say_where_each_comes_from(storage):
    acme = partner_with_stores(storage)
    suggested = operations.suggested_directions()
    operations.set_direction(storage, "acme", "ADJUSTMENT", -1)
    operations.set_direction(storage, "acme", "SALE", suggested["SALE"])
    operations.set_direction(storage, "acme", "GIFT", 0)
    listed = {entry.code: entry for entry in operations.directions(storage, acme)}
    assert list(listed)[: len(suggested)] == list(suggested) and list(listed)[-1] == "GIFT"
    assert listed["ADJUSTMENT"] == operations.Direction("ADJUSTMENT", -1, 1, True)
    assert listed["SALE"].own and listed["SALE"].direction == listed["SALE"].suggested
    assert listed["GIFT"] == operations.Direction("GIFT", 0, None, True)
    assert not listed["REFUND"].own

    assert operations.unset_direction(storage, "acme", "ADJUSTMENT") == 1
    assert operations.unset_direction(storage, "acme", "GIFT") is None
    with pytest.raises(AdminError, match="no direction of its own for payment type GIFT"):
        operations.unset_direction(storage, "acme", "GIFT")


# --- the queue's consumer side -------------------------------------------------------------------


def test_both_queue_adapters_have_the_whole_consumer_side():
    members = [name for name in vars(QueueConsumer) if not name.startswith("_")]
    assert {"receive", "poison_count", "replay_all_poison", "poison_name"} <= set(members)
    for adapter in (SqliteQueue, AzureQueue):
        for name in members:
            wanted = getattr(QueueConsumer, name)
            if isinstance(wanted, property):  # an attribute set in __init__ (queue_name) or a property
                continue
            assert list(inspect.signature(getattr(adapter, name)).parameters) == list(
                inspect.signature(wanted).parameters
            ), (adapter.__name__, name)


def test_the_sqlite_queue_counts_and_replays_every_poisoned_message(tmp_path):
    queue = SqliteQueue(tmp_path, "requests")
    for n in range(3):
        queue.send_to_poison(f'{{"n": {n}}}'.encode())
    queue.send("{}", 3600)  # on the main queue, not visible yet: not poisoned
    assert queue.poison_count() == 3
    assert queue.replay_all_poison() == 3
    assert queue.poison_count() == 0 and queue.poison_messages() == []
    bodies = {queue.receive(30).body for _ in range(3)}
    assert bodies == {'{"n": 0}', '{"n": 1}', '{"n": 2}'} and queue.receive(30) is None
    assert queue.replay_all_poison() == 0
