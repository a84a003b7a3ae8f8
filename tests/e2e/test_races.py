"""Races, on both backends: over real HTTP (the local host on SQLite, and on the Cosmos DB and Azurite
emulators), many requests released at the same moment; and in the use cases, a close or a mapping
arriving while a reconciliation is half done (held there by a fault point, devhost/fault_injection.py).

What must hold: a batch_id is accepted once and its records counted once; of concurrent versions of a
transaction the highest stays, in its own store-day only; of concurrent daily closes one is stored and
its result is the reconciliation of exactly its totals; a result is never saved over a newer close,
nor kept when the mapping changed under it.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid

import orjson
import pytest

from backends.azure_queue import AzureQueue
from backends.sqlite.delayed_queue import SqliteQueue
from backends.sqlite.storage import SqliteStorage
from core import reconcile_messages
from core.clock import utc_now
from devhost import fault_injection
from ingest.daily_close import post_daily_close
from ingest.mappings import put_mapping
from ingest.stores import put_stores
from ingest.trade_records import post_trade_records
from reconcile.service import reconcile
from tests.concurrency import all_at_once
from tests.conftest import make_partner
from tests.e2e.test_business_day import wait_for_result
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

RACERS = 16
DAY, DAY2 = "2026-11-20", "2026-11-21"
DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
REVENUE = {"01"}


# -- over HTTP, on both backends ------------------------------------------------------------------------


@pytest.fixture
def partner(backend_host):
    opened = make_partner(backend_host)
    assert opened.put("stores", stores_batch(store("S1"))).status_code == 202
    assert opened.put("mappings/transaction-types", mapping_batch(("01", "SALE"), ("02", "REFUND"))).status_code == 202
    return opened


def on_sqlite(partner) -> bool:
    return partner.host.env.get("POS_BACKEND", "sqlite") == "sqlite"


def close_and_wait(partner, business_date: str, totals: dict, batch_count: int = 1) -> dict:
    response = partner.post("daily-close", daily_close("S1", business_date, totals, batch_count))
    assert response.status_code == 202, response.text
    return wait_for_result(partner, "S1", business_date, 30)


def test_the_same_trade_records_batch_sent_at_once_is_accepted_once_and_counted_once(partner):
    records = [
        trade_record("S1", DAY, [Line("P-BURGER", 1 + i % 3, 550), Line("P-COLA", 1, 199)], tax=40 + i)
        for i in range(50)
    ]
    body = orjson.dumps(trade_batch("S1", DAY, records))
    responses = all_at_once(RACERS, lambda i: partner.post("trade-records", body))
    assert sorted(r.status_code for r in responses) == [200] * (RACERS - 1) + [202], [r.text for r in responses]
    for response in responses:
        answer = response.json()
        assert answer["record_count"] == 50 and answer["warnings"] == [], answer
        replayed = response.status_code == 200
        assert answer["status"] == ("ALREADY_RECEIVED" if replayed else "ACCEPTED")
        assert (response.headers.get("Idempotent-Replayed") == "true") == replayed

    result = close_and_wait(partner, DAY, totals_of(records, REVENUE, DIRECTIONS))
    assert result["status"] == "MATCHED", result
    assert result["details"]["batch_seqs_received"] == [1]  # one batch entry, not one per racer
    if on_sqlite(partner):
        host, partner_id = partner.host, partner.partner_id
        assert host.query("SELECT count(*) FROM trade_records WHERE partner_id = ?", partner_id) == [(50,)]
        assert host.query(
            "SELECT count(*) FROM batches WHERE partner_id = ? AND kind = 'trade-records'", partner_id
        ) == [(1,)]


def test_the_same_daily_close_sent_at_once_is_accepted_once(partner):
    record = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88)
    assert partner.post("trade-records", trade_batch("S1", DAY, [record])).status_code == 202
    body = orjson.dumps(daily_close("S1", DAY, totals_of([record], REVENUE, DIRECTIONS)))
    responses = all_at_once(RACERS, lambda i: partner.post("daily-close", body))
    assert sorted(r.status_code for r in responses) == [200] * (RACERS - 1) + [202], [r.text for r in responses]
    assert wait_for_result(partner, "S1", DAY, 30)["status"] == "MATCHED"


@pytest.mark.parametrize("moving", [False, True], ids=["same-day", "moving-between-days"])
def test_concurrent_versions_of_a_transaction_leave_the_highest(partner, moving):
    """Versions 1..N, each in its own batch, all at once; when `moving`, even versions belong to the next
    day: the highest (even) version must be in the next day only."""
    trade_record_id = f"T-{uuid.uuid4().hex[:12]}"

    def version(number: int) -> dict:
        business_date = DAY2 if moving and number % 2 == 0 else DAY
        return trade_record(
            "S1",
            business_date,
            [Line("P-BURGER", number, 550)],
            tax=10 * number,
            version=number,
            trade_record_id=trade_record_id,
            opened_at=f"{business_date}T12:00:00-05:00",
            last_modified_at=f"2026-11-22T10:00:{number:02d}Z",
        )

    versions = [version(number) for number in range(1, RACERS + 1)]
    batches = [trade_batch("S1", v["business_date"], [v], batch_seq=v["version"]) for v in versions]
    responses = all_at_once(RACERS, lambda i: partner.post("trade-records", batches[i]))
    assert [r.status_code for r in responses] == [202] * RACERS, [r.text for r in responses]

    highest = versions[-1]
    here = close_and_wait(partner, highest["business_date"], totals_of([highest], REVENUE, DIRECTIONS), RACERS)
    assert here["status"] == "MATCHED", here
    if moving:
        there = close_and_wait(partner, DAY, totals_of([], REVENUE, DIRECTIONS), RACERS // 2)
        assert there["status"] == "MATCHED", there
    if on_sqlite(partner):
        stored = partner.host.storage().store_day_rows(
            partner.partner_id, "S1", dt.date.fromisoformat(highest["business_date"])
        )
        assert [(row.trade_record_id, row.version) for row in stored] == [(trade_record_id, RACERS)]


def test_concurrent_daily_closes_leave_one_of_them_with_the_result_of_its_own_totals(partner):
    records = [trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44) for _ in range(3)]
    assert partner.post("trade-records", trade_batch("S1", DAY, records)).status_code == 202
    totals = totals_of(records, REVENUE, DIRECTIONS)
    # Close i claims i transactions too many: only close 0 matches, and each result tells which close it checked.
    closes = [
        daily_close("S1", DAY, {**totals, "trade_record_count": totals["trade_record_count"] + i})
        for i in range(RACERS)
    ]
    # "The last received" is the last one committed; responses of overlapping requests may arrive in
    # another order, so what is checked is that one of them is stored and its result is its own.
    responses = all_at_once(RACERS, lambda i: partner.post("daily-close", closes[i]))
    assert [r.status_code for r in responses] == [202] * RACERS, [r.text for r in responses]

    result = wait_for_result(partner, "S1", DAY, 30)
    stored = [i for i, close in enumerate(closes) if {k: close[k] for k in result["expected"]} == result["expected"]]
    assert len(stored) == 1, result  # exactly one of the closes sent is the stored one
    claimed_extra = stored[0]
    if claimed_extra == 0:
        assert (result["status"], result["differences"]) == ("MATCHED", []), result
    else:
        assert (result["status"], result["differences"]) == ("MISMATCHED", ["trade_record_count"]), result
        assert result["details"]["raw_differences"] == {"trade_record_count": -claimed_extra}
    assert result["actual"] == totals
    time.sleep(2)  # the other closes' messages come and go: they must not change the stored close or its result
    assert partner.get(f"daily-close/S1/{DAY}").json() == result

    # The last received wins: a close sent after all of them replaces the stored one, whichever it was.
    assert close_and_wait(partner, DAY, totals)["status"] == "MATCHED"


# -- in the use cases, on both adapters: a run held half way -----------------------------------------------


@pytest.fixture(params=["sqlite", "azure"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        return SqliteStorage(tmp_path), SqliteQueue(tmp_path, "reconcile-requests")
    azurite = request.getfixturevalue("azurite")
    return (
        request.getfixturevalue("cosmos_storage"),
        AzureQueue(f"races-{uuid.uuid4().hex[:16]}", connection_string=azurite.connection_string),
    )


def _json(body: dict) -> bytes:
    return orjson.dumps(body)


def open_day(storage, queue, source_codes=(("01", "SALE"),)):
    partner_id = f"r-{uuid.uuid4().hex[:10]}"
    storage.add_partner(partner_id, "Race partner", utc_now())
    storage.register_stores(partner_id, ["S1"], utc_now())
    partner = storage.get_partner(partner_id)
    assert put_stores(storage, partner, _json(stores_batch(store("S1")))).http_status == 202
    assert put_mapping(storage, queue, partner, _json(mapping_batch(*source_codes))).http_status == 202
    records = [
        trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44),
        trade_record("S1", DAY, [Line("P-FRIES", 1, 299)], tax=24, source_type="03"),
    ]
    assert post_trade_records(storage, queue, partner, _json(trade_batch("S1", DAY, records)), 0).http_status == 202
    return partner, records


def next_request(queue):
    message = queue.receive(30)
    assert message is not None
    queue.delete(message)
    return reconcile_messages.decode(message.body)


def held_at(point: str):
    """A fault action that holds the run at `point` until released; and the events to drive it."""
    reached, release = threading.Event(), threading.Event()

    def hold():
        reached.set()
        assert release.wait(60)

    return hold, reached, release


def run_in_thread(work) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(work()))
    thread.start()
    return thread, out


@pytest.mark.parametrize("point", ["reconcile.close_read", "reconcile.totals_read", "reconcile.before_save"])
def test_a_close_arriving_during_a_reconciliation_is_not_overwritten_by_the_stale_result(backend, point):
    storage, queue = backend
    partner, records = open_day(storage, queue, (("01", "SALE"), ("03", "SALE")))
    totals = totals_of(records, {"01", "03"}, DIRECTIONS)
    wrong = _json(daily_close("S1", DAY, {**totals, "tip_amount": "9.99"}))
    right = daily_close("S1", DAY, totals)
    assert post_daily_close(storage, queue, partner, wrong, 0).http_status == 202
    stale_request = next_request(queue)

    hold, reached, release = held_at(point)
    with fault_injection.injected(point, action=hold):
        thread, out = run_in_thread(lambda: reconcile(storage, stale_request))
        assert reached.wait(60)
        assert post_daily_close(storage, queue, partner, _json(right), 0).http_status == 202
        release.set()
        thread.join(60)
    assert out == [None]  # the stale result was dropped
    day = storage.get_closed_day(partner.partner_id, "S1", dt.date.fromisoformat(DAY))
    assert (day.close_batch_id, day.status, day.actual) == (right["batch_id"], "RECEIVED", None)

    result = reconcile(storage, next_request(queue))
    assert (result.close_batch_id, result.status, result.differences) == (right["batch_id"], "MATCHED", [])


def test_a_mapping_arriving_during_a_reconciliation_is_used_by_the_result_kept(backend):
    """The mapping upload re-runs only days already checked; a day being checked is RECEIVED still, so the
    run itself notices the mapping changed after it read it, and runs again."""
    storage, queue = backend
    partner, records = open_day(storage, queue)  # 03 unmapped
    totals = totals_of(records, {"01", "03"}, DIRECTIONS)
    close = daily_close("S1", DAY, totals)
    assert post_daily_close(storage, queue, partner, _json(close), 0).http_status == 202
    request = next_request(queue)

    hold, reached, release = held_at("reconcile.before_save")
    with fault_injection.injected("reconcile.before_save", action=hold):
        thread, out = run_in_thread(lambda: reconcile(storage, request))
        assert reached.wait(60)  # the result is computed with 03 unmapped: MISMATCHED
        remap = _json(mapping_batch(("01", "SALE"), ("03", "SALE")))
        assert put_mapping(storage, queue, partner, remap).http_status == 202
        release.set()
        thread.join(60)
    assert queue.receive(1) is None  # the upload re-ran nothing: the day was not checked yet
    [result] = out
    assert (result.status, result.details["mapped_source_codes"]) == ("MATCHED", {"01": "SALE", "03": "SALE"})
    stored = storage.get_closed_day(partner.partner_id, "S1", dt.date.fromisoformat(DAY))
    assert (stored.status, stored.actual) == ("MATCHED", result.actual)
