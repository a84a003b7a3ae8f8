"""The ingest and reconcile use cases called directly, on the in-memory storage: no HTTP, no database.

Request bodies are the bytes a partner sends; the queue records the messages sent, and `deliver` hands
them to the reconciliation as the queue trigger would. The same days run over HTTP on both backends in
tests/e2e/test_business_day.py; the in-memory storage passes the storage contract (test_storage_contract.py).
"""

from __future__ import annotations

import datetime as dt

import orjson
import pytest

from backends.memory.storage import MemoryStorage
from core import reconcile_messages
from core.clock import utc_now
from core.records import Partner
from ingest.daily_close import post_daily_close
from ingest.daily_close_status import daily_close_status
from ingest.mappings import put_mapping
from ingest.stores import put_stores
from ingest.trade_records import post_trade_records
from reconcile.service import reconcile
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

DAY = "2026-11-20"
BUSINESS_DATE = dt.date.fromisoformat(DAY)
DIRECTIONS = {"SALE": 1, "REFUND": -1}
DELAY_SECONDS = 900


class RecordingQueue:
    """The delayed queue's sending side in memory: what was sent, in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int]] = []
        self.poisoned: list[bytes] = []

    def send(self, body: str, delay_seconds: int) -> None:
        self.sent.append((body, delay_seconds))

    def ping(self) -> None:
        pass

    def send_to_poison(self, body: bytes) -> None:
        self.poisoned.append(body)


def body_of(payload: dict) -> bytes:
    return orjson.dumps(payload)


@pytest.fixture
def storage() -> MemoryStorage:
    return MemoryStorage()


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture
def partner(storage, queue) -> Partner:
    """A partner with store S1 registered and its master data sent, and source code 01 mapped to SALE."""
    storage.add_partner("p1", "Partner one", utc_now())
    storage.register_stores("p1", ["S1"], utc_now())
    partner = storage.get_partner("p1")
    assert put_stores(storage, partner, body_of(stores_batch(store("S1")))).http_status == 202
    assert put_mapping(storage, queue, partner, body_of(mapping_batch(("01", "SALE")))).http_status == 202
    return partner


def deliver(storage, queue: RecordingQueue) -> list:
    """Run the reconciliation of every message sent so far, as the queue trigger would; their results."""
    sent, queue.sent = queue.sent, []
    return [reconcile(storage, reconcile_messages.decode(body)) for body, _ in sent]


def push(storage, queue, partner, records: list[dict], batch_seq: int = 1) -> dict:
    outcome = post_trade_records(
        storage, queue, partner, body_of(trade_batch("S1", DAY, records, batch_seq)), DELAY_SECONDS
    )
    assert outcome.http_status == 202, outcome.as_dict()
    return outcome.as_dict()


def close(storage, queue, partner, totals: dict, **changes) -> dict:
    outcome = post_daily_close(
        storage, queue, partner, body_of(daily_close("S1", DAY, totals, **changes)), DELAY_SECONDS
    )
    assert outcome.http_status == 202, outcome.as_dict()
    return outcome.as_dict()


def test_a_day_pushed_and_closed_is_reconciled_to_matched(storage, queue, partner):
    records = [
        trade_record("S1", DAY, [Line("P-BURGER", 2, 550), Line("P-COLA", 1, 199)], tax=130, tip=100),
        trade_record("S1", DAY, [Line("P-FRIES", 3, 299)], tax=72),
    ]
    answer = push(storage, queue, partner, records)
    assert (answer["status"], answer["record_count"]) == ("ACCEPTED", 2)
    assert queue.sent == []  # records alone schedule nothing
    expected = totals_of(records, {"01"}, DIRECTIONS)
    close(storage, queue, partner, expected)
    assert [delay for _, delay in queue.sent] == [DELAY_SECONDS]  # the close's message, delayed
    assert daily_close_status(storage, partner, "S1", DAY)["status"] == "RECEIVED"

    [result] = deliver(storage, queue)
    assert result.status == "MATCHED"
    status = daily_close_status(storage, partner, "S1", DAY)
    assert (status["status"], status["differences"], status["actual"]) == ("MATCHED", [], expected)


def test_a_resent_batch_is_answered_already_received_and_changes_nothing(storage, queue, partner):
    records = [trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)]
    batch = trade_batch("S1", DAY, records)
    first = post_trade_records(storage, queue, partner, body_of(batch), DELAY_SECONDS)
    assert first.as_dict()["status"] == "ACCEPTED"

    resent = post_trade_records(storage, queue, partner, body_of(batch), DELAY_SECONDS)
    assert resent.http_status == 200
    assert resent.as_dict() == {
        "batch_id": batch["batch_id"],
        "status": "ALREADY_RECEIVED",
        "record_count": 1,
        "warnings": [],
    }
    # A different body under the same batch_id is ignored, and the answer says so.
    changed = {**batch, "trade_records": records * 2}
    ignored = post_trade_records(storage, queue, partner, body_of(changed), DELAY_SECONDS).as_dict()
    assert (ignored["status"], ignored["record_count"]) == ("ALREADY_RECEIVED", 1)
    assert [warning["code"] for warning in ignored["warnings"]] == ["RESEND_BODY_IGNORED"]
    assert storage.batch_seqs("p1", "S1", BUSINESS_DATE) == [1]  # one batch stored

    closing = daily_close("S1", DAY, totals_of(records, {"01"}, DIRECTIONS))
    post_daily_close(storage, queue, partner, body_of(closing), DELAY_SECONDS)
    again = post_daily_close(storage, queue, partner, body_of(closing), DELAY_SECONDS)
    assert again.as_dict()["status"] == "ALREADY_RECEIVED"
    assert len(queue.sent) == 1  # the resent close sends no second message


def test_a_mismatch_names_the_field_that_differs(storage, queue, partner):
    records = [
        trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44),
        trade_record("S1", DAY, [Line("P-COLA", 2, 199)], tax=32),
    ]
    push(storage, queue, partner, records)
    expected = {**totals_of(records, {"01"}, DIRECTIONS), "tax_amount": "1.76"}  # the POS counted 1.00 more tax
    close(storage, queue, partner, expected)

    [result] = deliver(storage, queue)
    assert (result.status, result.differences) == ("MISMATCHED", ["tax_amount"])
    status = daily_close_status(storage, partner, "S1", DAY)
    assert status["status"] == "MISMATCHED" and status["differences"] == ["tax_amount"]
    assert status["actual"]["tax_amount"] == "0.76" and status["expected"]["tax_amount"] == "1.76"
    assert status["details"]["raw_differences"]["tax_amount"] == "-1.00"


def test_a_mapping_upload_re_maps_a_checked_day(storage, queue, partner):
    sale = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88)
    refund = trade_record("S1", DAY, [Line("P-FRIES", -1, 299)], source_type="02", tax=-24)
    push(storage, queue, partner, [sale, refund])
    expected = totals_of([sale, refund], {"01", "02"}, DIRECTIONS)  # the POS counts its refund as revenue
    close(storage, queue, partner, expected)
    [unmapped] = deliver(storage, queue)
    assert (unmapped.status, unmapped.differences) == ("MISMATCHED", ["net_sales_amount"])
    assert unmapped.details["unmapped_source_codes"] == ["02"]

    uploaded = put_mapping(storage, queue, partner, body_of(mapping_batch(("01", "SALE"), ("02", "REFUND"))))
    assert uploaded.http_status == 202
    assert [reconcile_messages.decode(body).store_id for body, _ in queue.sent] == ["S1"]  # the checked day, re-run
    [remapped] = deliver(storage, queue)
    assert remapped.status == "MATCHED"
    assert daily_close_status(storage, partner, "S1", DAY)["details"]["mapped_source_codes"] == {
        "01": "SALE",
        "02": "REFUND",
    }
