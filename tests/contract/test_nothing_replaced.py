"""Nothing silently replaced, ever (decisions 0032 and 0033).

A batch marker may be gone (Cosmos DB markers expire when BATCH_MARKER_TTL_DAYS opts in; a marker may be
deleted), and a batch resent after that is then new to the marker look-up. A daily close or a mapping
replaces what it finds, so each store-day keeps the batch_id of every close it received, and each partner
of every mapping it uploaded: one of those resent is a resend (200 ALREADY_RECEIVED, its marker put
back), replaces nothing, and sends no reconciliation message. The expiry is simulated by deleting the
marker. Storage contract on both adapters, then the same over real HTTP on the local host on both.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import replace

import pytest

from backends.cosmos import keys, markers
from backends.memory.storage import MemoryStorage
from backends.sqlite.storage import SqliteStorage
from core.records import ClosedDay
from core.settings import Settings
from tests.backend_storage import storage_of
from tests.conftest import make_partner
from tests.contract.test_storage_contract import (
    DAY,
    NEXT_DAY,
    RACERS,
    T0,
    close_day,
    marker,
    new_id,
    result_of,
    run_together,
)
from tests.e2e.test_business_day import DAY as HTTP_DAY
from tests.e2e.test_business_day import DIRECTIONS, open_store, wait_for_result
from tests.e2e.test_close_race import queued
from tests.payloads import mapping_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

# Batch ids as partners send them: UUIDs, compared in their canonical (lower-case) form.
CLOSE_A, CLOSE_B, CLOSE_C = (
    "3f1c0b1e-8d2a-4c7e-9a10-0c5e2f6b7a01",
    "3f1c0b1e-8d2a-4c7e-9a10-0c5e2f6b7a02",
    "3f1c0b1e-8d2a-4c7e-9a10-0c5e2f6b7a03",
)


def forget_marker(storage, partner_id: str, batch_id: str) -> None:
    """What an expired (or lost) marker leaves: the batch's data, and no marker."""
    if isinstance(storage, MemoryStorage):
        del storage._batches[(partner_id, batch_id)]
    elif isinstance(storage, SqliteStorage):
        with storage.db.write() as db:
            deleted = db.execute("DELETE FROM batches WHERE partner_id = ? AND batch_id = ?", (partner_id, batch_id))
            assert deleted.rowcount == 1
    else:
        storage._containers.batches.delete_item(
            keys.compound_key(batch_id), partition_key=keys.compound_key(partner_id, batch_id)
        )
    assert storage.find_batch(partner_id, batch_id) is None


@pytest.fixture
def partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, ["FR-Lyon/Part-Dieu #2", "S2"], T0)
    return partner_id


STORE = "FR-Lyon/Part-Dieu #2"  # a store code with the punctuation real partners use


def close_marker(partner_id: str, batch_id: str, digest: str = "digest", business_date: dt.date = DAY):
    return marker(
        partner_id, "daily-close", batch_id=batch_id, store_id=STORE, business_date=business_date, digest=digest
    )


def a_close(batch_id: str, records: int) -> ClosedDay:
    return ClosedDay(STORE, DAY, batch_id, "EUR", {"trade_record_count": records}, T0, T0, "RECEIVED")


# -- storage contract: daily closes -----------------------------------------------------------------------


def test_an_earlier_close_resent_after_its_marker_is_gone_replaces_nothing(storage, partner):
    older = close_day(storage, partner, CLOSE_A, STORE, expected={"trade_record_count": 1})
    storage.save_result(partner, result_of(older, "MISMATCHED"))
    newer = close_day(storage, partner, CLOSE_B, STORE, expected={"trade_record_count": 2})
    storage.save_result(partner, result_of(newer))
    forget_marker(storage, partner, CLOSE_A)

    resent = close_marker(partner, CLOSE_A)
    resent_at = replace(resent, received_at=T0 + dt.timedelta(days=120))
    assert storage.save_daily_close(resent_at, replace(older, received_at=resent_at.received_at)) == resent
    assert storage.get_closed_day(partner, STORE, DAY) == result_of(newer)
    assert storage.find_batch(partner, CLOSE_A) == resent  # its marker is back, as first received
    # The resend of the resend is answered from that marker; the day still keeps the newer close.
    assert storage.save_daily_close(resent_at, older) == resent
    assert storage.get_closed_day(partner, STORE, DAY) == result_of(newer)


def test_a_close_resent_with_another_body_keeps_the_first_bodys_digest(storage, partner):
    close_day(storage, partner, CLOSE_A, STORE)
    close_day(storage, partner, CLOSE_B, STORE)
    forget_marker(storage, partner, CLOSE_A)
    changed = close_marker(partner, CLOSE_A, digest="another body")
    assert storage.save_daily_close(changed, a_close(CLOSE_A, 9)) == close_marker(partner, CLOSE_A)
    assert storage.get_closed_day(partner, STORE, DAY).close_batch_id == CLOSE_B


def test_the_latest_close_resent_after_its_marker_is_gone_keeps_its_result(storage, partner):
    latest = close_day(storage, partner, CLOSE_A, STORE)
    storage.save_result(partner, result_of(latest))
    forget_marker(storage, partner, CLOSE_A)
    assert storage.save_daily_close(close_marker(partner, CLOSE_A), latest) == close_marker(partner, CLOSE_A)
    assert storage.get_closed_day(partner, STORE, DAY) == result_of(latest)  # not put back to RECEIVED


def test_a_store_day_remembers_every_close_it_received_in_any_order(storage, partner):
    for batch_id in (CLOSE_A, CLOSE_B, CLOSE_C):
        close_day(storage, partner, batch_id, STORE)
    for batch_id in (CLOSE_A, CLOSE_B, CLOSE_C):
        forget_marker(storage, partner, batch_id)
    for batch_id in (CLOSE_B, CLOSE_A, CLOSE_C, CLOSE_A):
        assert storage.save_daily_close(close_marker(partner, batch_id), a_close(batch_id, 5)) is not None
        assert storage.get_closed_day(partner, STORE, DAY).close_batch_id == CLOSE_C


def test_close_received_knows_the_closes_of_a_store_day_without_their_markers(storage, partner):
    close_day(storage, partner, CLOSE_A, STORE)
    close_day(storage, partner, CLOSE_B, STORE)
    forget_marker(storage, partner, CLOSE_A)
    assert storage.close_received(partner, STORE, DAY, CLOSE_A)
    assert storage.close_received(partner, STORE, DAY, CLOSE_B)
    assert not storage.close_received(partner, STORE, DAY, CLOSE_C)
    assert not storage.close_received(partner, STORE, NEXT_DAY, CLOSE_A)  # per store-day
    assert not storage.close_received(partner, "S2", DAY, CLOSE_A)
    other = new_id()
    storage.add_partner(other, "Other", T0)
    assert not storage.close_received(other, STORE, DAY, CLOSE_A)  # per partner


def test_a_new_close_after_a_resend_still_wins(storage, partner):
    close_day(storage, partner, CLOSE_A, STORE)
    close_day(storage, partner, CLOSE_B, STORE)
    forget_marker(storage, partner, CLOSE_A)
    storage.save_daily_close(close_marker(partner, CLOSE_A), a_close(CLOSE_A, 1))
    newest = close_day(storage, partner, CLOSE_C, STORE, expected={"trade_record_count": 3})
    assert storage.get_closed_day(partner, STORE, DAY) == newest


def test_concurrent_resends_of_an_earlier_close_and_a_new_close_leave_the_new_one(storage, partner):
    close_day(storage, partner, CLOSE_A, STORE)
    close_day(storage, partner, CLOSE_B, STORE)
    forget_marker(storage, partner, CLOSE_A)
    newest = a_close(CLOSE_C, 3)

    def send(i: int):
        if i % 2:
            return storage.save_daily_close(close_marker(partner, CLOSE_A), a_close(CLOSE_A, 1))
        return storage.save_daily_close(close_marker(partner, CLOSE_C), newest)

    answers = run_together(RACERS, send)
    assert [answers[i] for i in range(1, RACERS, 2)] == [close_marker(partner, CLOSE_A)] * (RACERS // 2)
    assert sorted(answers[i] is None for i in range(0, RACERS, 2)) == [False] * (RACERS // 2 - 1) + [True]
    assert storage.get_closed_day(partner, STORE, DAY) == newest


# -- storage contract: mappings ----------------------------------------------------------------------------


def test_an_earlier_mapping_resent_after_its_marker_is_gone_replaces_nothing(storage, partner):
    first = marker(partner, "mappings", 1)
    storage.replace_mapping(first, [{"source_code": "01", "standard_code": "SALE"}])
    second = replace(marker(partner, "mappings", 2), received_at=T0 + dt.timedelta(hours=1))
    newer = [{"source_code": "01", "standard_code": "REFUND"}, {"source_code": "販売", "standard_code": "SALE"}]
    storage.replace_mapping(second, newer)
    forget_marker(storage, partner, first.batch_id)

    resent = replace(first, body_digest="another body", received_at=T0 + dt.timedelta(days=200))
    assert storage.replace_mapping(resent, [{"source_code": "01", "standard_code": "SALE"}]) == first
    assert storage.get_mapping(partner).entries == newer
    assert storage.get_mapping(partner).batch_id == second.batch_id
    assert storage.find_batch(partner, first.batch_id) == first


def test_concurrent_twins_of_a_mapping_store_it_once_and_one_is_accepted(storage, partner):
    batch = marker(partner, "mappings", 1)
    entries = [{"source_code": "VENTE/TPE #1", "standard_code": "SALE"}]
    answers = run_together(RACERS, lambda _: storage.replace_mapping(batch, entries))
    assert answers.count(None) == 1 and answers.count(batch) == RACERS - 1
    assert storage.get_mapping(partner).entries == entries


# -- Cosmos DB: markers do not expire unless told to -------------------------------------------------------


def test_cosmos_db_markers_carry_no_time_to_live_by_default(cosmos_storage, monkeypatch):
    monkeypatch.delenv("BATCH_MARKER_TTL_DAYS", raising=False)
    assert Settings.from_env().batch_marker_ttl_days == markers.DEFAULT_MARKER_TTL_DAYS == 0
    partner_id = new_id()
    cosmos_storage.add_partner(partner_id, "Partner", T0)
    batch = marker(partner_id, "mappings")
    cosmos_storage.replace_mapping(batch, [])
    item = cosmos_storage._containers.batches.read_item(
        keys.compound_key(batch.batch_id), partition_key=keys.compound_key(partner_id, batch.batch_id)
    )
    assert "ttl" not in item


def test_a_close_item_keeps_its_receipts_through_a_result_and_a_postponement(cosmos_storage):
    partner_id = new_id()
    cosmos_storage.add_partner(partner_id, "Partner", T0)
    first = close_day(cosmos_storage, partner_id, CLOSE_A, STORE)
    cosmos_storage.save_result(partner_id, result_of(first))
    cosmos_storage.postpone(partner_id, STORE, DAY, T0)
    forget_marker(cosmos_storage, partner_id, CLOSE_A)
    assert cosmos_storage.close_received(partner_id, STORE, DAY, CLOSE_A)


# -- over HTTP on the local host, both backends ------------------------------------------------------------


@pytest.fixture
def shop(backend_host):
    partner = make_partner(backend_host, ("S1",))
    open_store(partner)
    return partner


def reconciliations_of(host, partner_id: str, since: int) -> list[dict]:
    """The reconciliation runs the host logged for this partner after offset `since` of its log."""
    return [
        json.loads(line) for line in host.log()[since:].splitlines() if partner_id in line and "reconciliation" in line
    ]


def settle(host, partner, close_batch_id: str, since: int) -> None:
    """Give a message the resend might have sent time to be delivered (delay 1 s), then check none was."""
    time.sleep(4)
    assert reconciliations_of(host, partner.partner_id, since) == []
    if host.env.get("POS_BACKEND") != "azure":
        assert queued(host, close_batch_id) == []


def test_an_earlier_close_resent_after_its_marker_is_gone_changes_nothing(backend_host, shop):
    first = trade_record("S1", HTTP_DAY, [Line("P-BURGER", 1, 550)], tax=44)
    second = trade_record("S1", HTTP_DAY, [Line("P-COLA", 2, 199)], tax=32)
    assert shop.post("trade-records", trade_batch("S1", HTTP_DAY, [first])).status_code == 202
    old_close = daily_close("S1", HTTP_DAY, totals_of([first], {"01"}, DIRECTIONS))
    assert shop.post("daily-close", old_close).status_code == 202
    assert wait_for_result(shop, "S1", HTTP_DAY)["status"] == "MATCHED"

    assert shop.post("trade-records", trade_batch("S1", HTTP_DAY, [second], batch_seq=2)).status_code == 202
    new_close = daily_close("S1", HTTP_DAY, totals_of([first, second], {"01"}, DIRECTIONS), batch_count=2)
    assert shop.post("daily-close", new_close).status_code == 202
    result = wait_for_result(shop, "S1", HTTP_DAY)
    assert result["status"] == "MATCHED" and result["expected"]["trade_record_count"] == 2, result

    forget_marker(storage_of(backend_host), shop.partner_id, old_close["batch_id"])
    since = len(backend_host.log())
    resent = shop.post("daily-close", old_close)
    assert resent.status_code == 200, resent.text
    assert resent.json() == {
        "batch_id": old_close["batch_id"],
        "status": "ALREADY_RECEIVED",
        "record_count": 1,
        "warnings": [],
    }
    assert shop.get(f"daily-close/S1/{HTTP_DAY}").json() == result
    again = shop.post("daily-close", old_close)  # the resend of the resend: from the marker put back
    assert again.status_code == 200 and again.headers.get("Idempotent-Replayed") == "true"

    settle(backend_host, shop, old_close["batch_id"], since)
    assert shop.get(f"daily-close/S1/{HTTP_DAY}").json() == result  # the newer close's result, untouched


def test_a_close_resent_with_changed_totals_after_its_marker_is_gone_is_ignored_with_a_warning(backend_host, shop):
    record = trade_record("S1", HTTP_DAY, [Line("P-BURGER", 1, 550)], tax=44)
    assert shop.post("trade-records", trade_batch("S1", HTTP_DAY, [record])).status_code == 202
    wrong = daily_close("S1", HTTP_DAY, {**totals_of([record], {"01"}, DIRECTIONS), "trade_record_count": 7})
    assert shop.post("daily-close", wrong).status_code == 202
    right = daily_close("S1", HTTP_DAY, totals_of([record], {"01"}, DIRECTIONS))
    assert shop.post("daily-close", right).status_code == 202
    result = wait_for_result(shop, "S1", HTTP_DAY)
    assert result["status"] == "MATCHED", result

    forget_marker(storage_of(backend_host), shop.partner_id, wrong["batch_id"])
    since = len(backend_host.log())
    changed = {**wrong, "trade_record_count": 8}
    resent = shop.post("daily-close", changed)
    assert resent.status_code == 200, resent.text
    assert resent.json()["status"] == "ALREADY_RECEIVED"
    assert [warning["code"] for warning in resent.json()["warnings"]] == ["RESEND_BODY_IGNORED"]
    settle(backend_host, shop, wrong["batch_id"], since)
    assert shop.get(f"daily-close/S1/{HTTP_DAY}").json() == result


def test_the_latest_close_resent_after_its_marker_is_gone_is_not_reconciled_again(backend_host, shop):
    record = trade_record("S1", HTTP_DAY, [Line("P-BURGER", 1, 550)], tax=44)
    assert shop.post("trade-records", trade_batch("S1", HTTP_DAY, [record])).status_code == 202
    close = daily_close("S1", HTTP_DAY, totals_of([record], {"01"}, DIRECTIONS))
    assert shop.post("daily-close", close).status_code == 202
    result = wait_for_result(shop, "S1", HTTP_DAY)
    assert result["status"] == "MATCHED", result

    forget_marker(storage_of(backend_host), shop.partner_id, close["batch_id"])
    since = len(backend_host.log())
    resent = shop.post("daily-close", close)
    assert resent.status_code == 200 and resent.json()["status"] == "ALREADY_RECEIVED", resent.text
    settle(backend_host, shop, close["batch_id"], since)
    assert shop.get(f"daily-close/S1/{HTTP_DAY}").json() == result  # same checked_at: not run again


def test_an_earlier_mapping_resent_after_its_marker_is_gone_leaves_the_mapping_in_effect(backend_host, shop):
    first = mapping_batch(("01", "SALE"), ("返品", "REFUND"))
    second = mapping_batch(("01", "SALE"), ("返品", "RETURN"))
    for batch in (first, second):
        assert shop.put("mappings/transaction-types", batch).status_code == 202
    forget_marker(storage_of(backend_host), shop.partner_id, first["batch_id"])
    resent = shop.put("mappings/transaction-types", first)
    assert resent.status_code == 200, resent.text
    assert resent.json()["status"] == "ALREADY_RECEIVED" and resent.json()["record_count"] == 2
    mapping = shop.get("mappings/transaction-types").json()
    assert mapping["batch_id"] == second["batch_id"]
    assert {m["source_code"]: m["standard_code"] for m in mapping["mappings"]} == {"01": "SALE", "返品": "RETURN"}
