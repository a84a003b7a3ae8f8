"""Retention of trade records (TRADE_RECORD_RETENTION_DAYS; decision 0086) on the
in-memory storage: the dates it keeps, the setting's rule, a write for a retired store-day refused whole,
and a retired day's result kept by every path that would compute it again (reconciliation, a mapping
upload, a record moving out). Retiring rows is in tests/contract/test_retention.py on every adapter.

Store-days are dated from today (UTC): a fixed date would turn retired as the calendar moves on."""

from __future__ import annotations

import datetime as dt
import math

import orjson
import pytest

from backends.memory.storage import MemoryStorage
from core import reconcile_messages
from core.clock import utc_now
from core.errors import ApiError
from core.records import ReconcileRequest
from core.retention import EXPIRY_GRACE_DAYS, MIN_RETENTION_DAYS, expiry_seconds, first_kept_date, is_retired
from core.settings import Settings
from ingest.daily_close import post_daily_close
from ingest.daily_close_status import daily_close_status
from ingest.mappings import put_mapping
from ingest.retention import retention_problems
from ingest.stores import put_stores
from ingest.trade_records import post_trade_records
from reconcile.retention import NEVER_CLOSED, NOT_EXPORTED, export_lag_warning, retire_store_days
from reconcile.service import reconcile
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

UTC = dt.UTC
RETENTION = 30
STORE = "0042"  # partners' store ids are often numbers
PRODUCT = "4901234567894"  # a JAN code
DIRECTIONS = {"SALE": 1, "REFUND": -1}


def days_ago(days: int) -> str:
    return (utc_now().date() - dt.timedelta(days=days)).isoformat()


# -- the dates ----------------------------------------------------------------------------------------


def test_a_day_is_retired_once_older_than_today_minus_the_retention():
    today = dt.date(2026, 3, 1)  # across a February
    assert first_kept_date(today, 7) == dt.date(2026, 2, 22)
    assert not is_retired(dt.date(2026, 2, 22), today, 7)
    assert is_retired(dt.date(2026, 2, 21), today, 7)
    assert not is_retired(dt.date(2000, 1, 1), today, 0)  # 0 keeps every day
    assert first_kept_date(today, 0) is None


def test_cosmos_ttl_runs_to_the_grace_days_after_the_day_is_retired():
    business_date = dt.date(2026, 11, 20)
    # Retired from 2026-11-28 (today - 7 > 11-20), expiring at midnight UTC starting 11-30.
    expires = dt.datetime(2026, 11, 28, tzinfo=UTC) + dt.timedelta(days=EXPIRY_GRACE_DAYS)
    now = dt.datetime(2026, 11, 21, 13, 5, 7, 900_000, tzinfo=UTC)
    assert expiry_seconds(business_date, now, 7) == math.ceil((expires - now).total_seconds())  # never early
    assert expiry_seconds(business_date, expires - dt.timedelta(seconds=1), 7) == 1
    assert expiry_seconds(business_date, expires + dt.timedelta(days=400), 7) == 1  # never 0 or less
    assert expiry_seconds(business_date, now, 0) is None


def test_the_problem_names_the_date_and_the_retention():
    [problem] = retention_problems(dt.date(2026, 1, 2), dt.date(2026, 2, 10), 30)
    assert problem.path == "business_date"
    assert "2026-01-02 is past HQ's retention of 30 days" in problem.message
    assert "2026-01-11" in problem.message  # the oldest business date accepted
    assert retention_problems(dt.date(2026, 1, 11), dt.date(2026, 2, 10), 30) == []


# -- the setting --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["6", "-1", "thirty", "1.5"])
def test_a_retention_below_the_minimum_or_not_a_number_fails_at_start(monkeypatch, value):
    monkeypatch.setenv("TRADE_RECORD_RETENTION_DAYS", value)
    with pytest.raises(ValueError, match="TRADE_RECORD_RETENTION_DAYS"):
        Settings.from_env()


@pytest.mark.parametrize(
    ("value", "days"), [("", 0), ("0", 0), (str(MIN_RETENTION_DAYS), MIN_RETENTION_DAYS), ("400", 400)]
)
def test_retention_is_off_by_default_and_takes_whole_days_from_the_minimum(monkeypatch, value, days):
    monkeypatch.setenv("TRADE_RECORD_RETENTION_DAYS", value)
    assert Settings.from_env().trade_record_retention_days == days


# -- the use cases on a storage that keeps RETENTION days ----------------------------------------------


class RecordingQueue:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, body: str, delay_seconds: int) -> None:
        self.sent.append(body)

    def ping(self) -> None:
        pass

    def send_to_poison(self, body: bytes) -> None:
        raise AssertionError("nothing is poisoned here")


@pytest.fixture
def storage() -> MemoryStorage:
    return MemoryStorage(retention_days=RETENTION)


@pytest.fixture
def queue() -> RecordingQueue:
    return RecordingQueue()


@pytest.fixture
def partner(storage, queue):
    return open_partner(storage, queue)


def open_partner(storage, queue):
    """Partner p1 with the Japanese store, its master data and mapping sent."""
    storage.add_partner("p1", "パートナー", utc_now())
    storage.register_stores("p1", [STORE], utc_now())
    partner = storage.get_partner("p1")
    japanese_store = store(STORE, country_code="JP", currency="JPY", time_zone="Asia/Tokyo", locale="ja-JP")
    assert put_stores(storage, partner, orjson.dumps(stores_batch(japanese_store))).http_status == 202
    assert put_mapping(storage, queue, partner, orjson.dumps(mapping_batch(("01", "SALE")))).http_status == 202
    queue.sent.clear()
    return partner


def record(date: str, amount: int = 1200, **changes) -> dict:
    return trade_record(STORE, date, [Line(PRODUCT, 1, amount)], currency="JPY", exponent=0, **changes)


def push(storage, queue, partner, date: str, records: list[dict], **options):
    return post_trade_records(storage, queue, partner, orjson.dumps(trade_batch(STORE, date, records)), 0, **options)


def close(storage, queue, partner, date: str, records: list[dict], **options):
    totals = totals_of(records, {"01"}, DIRECTIONS, exponent=0)
    body = orjson.dumps(daily_close(STORE, date, totals, currency="JPY"))
    return post_daily_close(storage, queue, partner, body, 0, **options)


def deliver(storage, queue) -> list:
    sent, queue.sent = queue.sent, []
    return [reconcile(storage, reconcile_messages.decode(body)) for body in sent]


def reconciled_day(storage, queue, partner, date: str) -> list[dict]:
    """A store-day pushed, closed and reconciled to MATCHED while still kept."""
    records = [record(date), record(date, 880)]
    assert push(storage, queue, partner, date, records).http_status == 202
    assert close(storage, queue, partner, date, records).http_status == 202
    [result] = deliver(storage, queue)
    assert result.status == "MATCHED"
    return records


def as_if_days_passed(storage, days: int) -> None:
    """Time moving on, as the retention sees it: the same days, kept `days` fewer days."""
    storage.retention_days = RETENTION - days


def test_a_batch_for_a_retired_day_is_refused_whole_and_stores_nothing(storage, queue, partner):
    oldest = days_ago(RETENTION)
    assert push(storage, queue, partner, oldest, [record(oldest)]).http_status == 202  # the last day kept

    retired = days_ago(RETENTION + 1)
    batch = trade_batch(STORE, retired, [record(retired)])
    for validate_only in (True, False):
        with pytest.raises(ApiError) as refused:
            post_trade_records(storage, queue, partner, orjson.dumps(batch), 0, validate_only=validate_only)
        assert (refused.value.status, refused.value.code) == (400, "INVALID_PAYLOAD")
        [problem] = refused.value.errors
        assert problem.path == "business_date"
        assert f"past HQ's retention of {RETENTION} days" in problem.message
    assert storage.find_batch("p1", batch["batch_id"]) is None
    assert storage.store_day_rows("p1", STORE, dt.date.fromisoformat(retired)) == []


def test_a_close_for_a_retired_day_is_refused_and_sends_nothing(storage, queue, partner):
    retired = days_ago(RETENTION + 5)
    with pytest.raises(ApiError) as refused:
        close(storage, queue, partner, retired, [record(retired)])
    assert (refused.value.status, [problem.path for problem in refused.value.errors]) == (400, ["business_date"])
    assert queue.sent == []
    assert storage.closed_days("p1") == []


def test_a_retired_days_result_is_kept_by_reconciliation_and_answered(storage, queue, partner):
    date = days_ago(RETENTION - 2)
    reconciled_day(storage, queue, partner, date)
    before = daily_close_status(storage, partner, STORE, date)
    as_if_days_passed(storage, 3)
    storage.retire_rows("p1", STORE, dt.date.fromisoformat(date), 100)  # its records gone

    day = storage.get_closed_day("p1", STORE, dt.date.fromisoformat(date))
    request = ReconcileRequest("p1", STORE, day.business_date, day.close_batch_id)
    kept = reconcile(storage, request)  # HQ's `reconcile run`: never computed from the records left
    assert kept == day
    assert daily_close_status(storage, partner, STORE, date) == before
    assert before["status"] == "MATCHED"


def test_a_mapping_upload_re_runs_kept_days_only(storage, queue, partner):
    retired, kept = days_ago(RETENTION - 2), days_ago(1)
    for date in (retired, kept):
        reconciled_day(storage, queue, partner, date)
    as_if_days_passed(storage, 3)
    assert put_mapping(storage, queue, partner, orjson.dumps(mapping_batch(("01", "REFUND")))).http_status == 202
    assert [reconcile_messages.decode(body).business_date.isoformat() for body in queue.sent] == [kept]
    assert daily_close_status(storage, partner, STORE, retired)["status"] == "MATCHED"


def test_a_record_moving_out_of_a_retired_day_leaves_its_result(storage, queue, partner):
    retired, kept = days_ago(RETENTION - 2), days_ago(1)
    moving = reconciled_day(storage, queue, partner, retired)[0]
    reconciled_day(storage, queue, partner, kept)
    as_if_days_passed(storage, 3)
    later = {**record(kept), "trade_record_id": moving["trade_record_id"], "version": 2}
    assert push(storage, queue, partner, kept, [later]).http_status == 202
    assert [reconcile_messages.decode(body).business_date.isoformat() for body in queue.sent] == [kept]
    assert daily_close_status(storage, partner, STORE, retired)["status"] == "MATCHED"


# -- retire_store_days: what leaves and when ------------------------------------------------------------


def test_retire_waits_for_the_export_and_never_touches_kept_days(storage, queue, partner):
    reconciled = days_ago(RETENTION + 3)
    never_closed = days_ago(RETENTION + 2)
    young = days_ago(RETENTION)
    as_if_days_passed(storage, -RETENTION)  # all three still kept while they arrive
    reconciled_day(storage, queue, partner, reconciled)
    for date in (never_closed, young):
        assert push(storage, queue, partner, date, [record(date)]).http_status == 202
    checked_at = storage.get_closed_day("p1", STORE, dt.date.fromisoformat(reconciled)).checked_at
    today = utc_now().date()

    before_export = retire_store_days(storage, today, RETENTION, checked_at - dt.timedelta(seconds=1), 1)
    assert (before_export.days, before_export.rows) == (0, 0)
    assert before_export.kept == {NOT_EXPORTED: 1, NEVER_CLOSED: 1}

    steps = []
    exported = retire_store_days(storage, today, RETENTION, checked_at, 1, lambda day, rows: steps.append(rows))
    assert (exported.days, exported.rows, steps) == (1, 3, [1, 1, 1])  # two records, then the batch
    assert storage.store_day_rows("p1", STORE, dt.date.fromisoformat(reconciled)) == []
    assert daily_close_status(storage, partner, STORE, reconciled)["status"] == "MATCHED"

    no_export = retire_store_days(storage, today, RETENTION, None, 10)  # by date alone
    assert (no_export.days, no_export.rows) == (1, 2)
    assert len(storage.store_day_rows("p1", STORE, dt.date.fromisoformat(young))) == 1
    assert retire_store_days(storage, today, 0, None, 10).days == 0  # retention off: nothing


def test_an_export_checkpoint_older_than_the_grace_is_warned():
    now = dt.datetime(2026, 11, 27, tzinfo=UTC)
    assert export_lag_warning(None, now) is None
    assert export_lag_warning(now - dt.timedelta(days=EXPIRY_GRACE_DAYS), now) is None
    assert "checkpoint" in export_lag_warning(now - dt.timedelta(days=EXPIRY_GRACE_DAYS, seconds=1), now)
