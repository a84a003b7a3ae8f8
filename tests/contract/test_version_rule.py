"""Which version wins, stated once in core/versions.py, and the storage adapters' upserts agree with it.

The SQLite upserts keep the rule as SQL WHERE clauses (backends/sqlite/batch_writes.py), the Cosmos DB
adapter as its own comparisons: each case is written through the adapter (stored version first, then the
incoming one) and what the adapter kept must be what core.versions says. `-k sqlite` runs SQLite alone.
"""

from __future__ import annotations

import datetime as dt
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.records import BatchMarker, ProductMaster, StoreMaster, TradeRecordRow
from core.versions import Version, master_replaces, trade_record_replaces

UTC = dt.UTC
STORED_AT = dt.datetime(2026, 11, 20, 9, 30, 0, 500000, tzinfo=UTC)
ONE_MICROSECOND = dt.timedelta(microseconds=1)
DAY = dt.date(2026, 11, 20)
STORED_VERSION = 5

# (case, incoming version, incoming last_modified_at) against a stored (STORED_VERSION, STORED_AT).
CASES = [
    ("higher version, earlier time", STORED_VERSION + 1, STORED_AT - dt.timedelta(days=1)),
    ("lower version, later time", STORED_VERSION - 1, STORED_AT + dt.timedelta(days=1)),
    ("equal version, later time", STORED_VERSION, STORED_AT + ONE_MICROSECOND),
    ("equal version, earlier time", STORED_VERSION, STORED_AT - ONE_MICROSECOND),
    ("equal version, equal time", STORED_VERSION, STORED_AT),
]
# A store has no version number (core.versions gives it 0): only the time decides.
STORE_CASES = [
    ("later time", STORED_AT + ONE_MICROSECOND),
    ("earlier time", STORED_AT - ONE_MICROSECOND),
    ("equal time", STORED_AT),
]
CASE_IDS = [case[0] for case in CASES]
STORE_CASE_IDS = [case[0] for case in STORE_CASES]

# The Cosmos DB emulator's self-signed certificate (verification is off for loopback endpoints only).
pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


@pytest.fixture
def partner_id(storage) -> str:
    partner_id = f"v-{uuid.uuid4().hex[:10]}"
    storage.add_partner(partner_id, "Versions", STORED_AT)
    storage.register_stores(partner_id, ["S1"], STORED_AT)
    return partner_id


def marker(partner_id: str, kind: str, **day) -> BatchMarker:
    return BatchMarker(partner_id, str(uuid.uuid4()), kind, 1, "digest", STORED_AT, **day)


def trade_record(version: int, modified: dt.datetime, total_minor: int, business_date: dt.date = DAY) -> TradeRecordRow:
    # total_minor tells which of the two sends the adapter kept (the version alone cannot, when equal)
    return TradeRecordRow(
        "T1", version, modified, "S1", business_date, "01", 1, 1, total_minor, 0, 0, {"SALE": total_minor}, "{}"
    )


def save_one(storage, partner_id: str, row: TradeRecordRow) -> None:
    day = {"store_id": "S1", "business_date": row.business_date, "batch_seq": 1}
    storage.save_trade_records(marker(partner_id, "trade-records", **day), [row])


@pytest.mark.parametrize(("case", "version", "modified"), CASES, ids=CASE_IDS)
def test_the_adapter_keeps_the_trade_record_core_versions_says(storage, partner_id, case, version, modified):
    expected = trade_record_replaces(Version.of(version, modified), Version.of(STORED_VERSION, STORED_AT))
    for total_minor, row_version, row_modified in ((100, STORED_VERSION, STORED_AT), (200, version, modified)):
        storage.save_trade_records(
            marker(partner_id, "trade-records", store_id="S1", business_date=DAY, batch_seq=1),
            [trade_record(row_version, row_modified, total_minor)],
        )
    [kept] = storage.store_day_rows(partner_id, "S1", DAY)
    assert (kept.total_minor == 200) is expected, case
    assert (kept.version, kept.last_modified_at) == ((version, modified) if expected else (STORED_VERSION, STORED_AT))


# A first version (1) is written by the Cosmos DB adapter without reading its version entry first (it is
# most likely new): these cases take that path against a stored first or second version, in the same
# store-day and in another one, where a first version wrongly kept would count the record twice.
FIRST_CASES = [
    ("first version again, later time", (1, STORED_AT), STORED_AT + ONE_MICROSECOND),
    ("first version again, earlier time", (1, STORED_AT), STORED_AT - ONE_MICROSECOND),
    ("first version again, equal time", (1, STORED_AT), STORED_AT),
    ("first version after the second", (2, STORED_AT), STORED_AT + dt.timedelta(days=1)),
]
OTHER_DAY = DAY + dt.timedelta(days=1)


@pytest.mark.parametrize("elsewhere", [False, True], ids=["same store-day", "another store-day"])
@pytest.mark.parametrize(("case", "stored", "modified"), FIRST_CASES, ids=[case[0] for case in FIRST_CASES])
def test_a_first_version_sent_after_another_keeps_the_rule(storage, partner_id, case, stored, modified, elsewhere):
    expected = trade_record_replaces(Version.of(1, modified), Version.of(*stored))
    incoming_day = OTHER_DAY if elsewhere else DAY
    save_one(storage, partner_id, trade_record(*stored, total_minor=100))
    save_one(storage, partner_id, trade_record(1, modified, total_minor=200, business_date=incoming_day))
    kept = {
        day: {row.trade_record_id: row.total_minor for row in storage.store_day_rows(partner_id, "S1", day)}
        for day in {DAY, incoming_day}
    }
    if expected:
        assert kept == {DAY: {}, incoming_day: {"T1": 200}} if elsewhere else kept == {DAY: {"T1": 200}}, case
    else:
        assert kept == {DAY: {"T1": 100}, incoming_day: {}} if elsewhere else kept == {DAY: {"T1": 100}}, case


def test_first_versions_racing_in_several_store_days_leave_the_latest_in_its_day_only(storage, partner_id):
    """Equal versions (a partner that re-dated a record without raising its version): the later
    last_modified_at wins, and only its store-day holds the record, however the writes interleave."""
    racers = 8
    days = [DAY + dt.timedelta(days=offset) for offset in range(3)]

    def send(index: int) -> None:
        row = trade_record(1, STORED_AT + index * ONE_MICROSECOND, index, business_date=days[index % len(days)])
        save_one(storage, partner_id, row)

    with ThreadPoolExecutor(racers) as pool:
        list(pool.map(send, range(racers)))
    latest = racers - 1
    kept = {day: [row.total_minor for row in storage.store_day_rows(partner_id, "S1", day)] for day in days}
    assert kept == {day: [latest] if day == days[latest % len(days)] else [] for day in days}


@pytest.mark.parametrize(("case", "version", "modified"), CASES, ids=CASE_IDS)
def test_the_adapter_keeps_the_product_core_versions_says(storage, partner_id, case, version, modified):
    expected = master_replaces(Version.of(version, modified), Version.of(STORED_VERSION, STORED_AT))
    for send, product_version, product_modified in (
        ("first", STORED_VERSION, STORED_AT),
        ("second", version, modified),
    ):
        product = ProductMaster("P1", None, product_version, product_modified, {"send": send})
        storage.save_products(marker(partner_id, "products"), [product], [])
    kept = storage.get_product(partner_id, "P1", None)
    assert (kept.document == {"send": "second"}) is expected, case


@pytest.mark.parametrize(("case", "modified"), STORE_CASES, ids=STORE_CASE_IDS)
def test_the_adapter_keeps_the_store_core_versions_says(storage, partner_id, case, modified):
    expected = master_replaces(Version.of(0, modified), Version.of(0, STORED_AT))
    for send, store_modified in (("first", STORED_AT), ("second", modified)):
        store = StoreMaster("S1", "USD", "US", "America/New_York", "04:00", False, store_modified, {"send": send})
        storage.save_stores(marker(partner_id, "stores"), [store])
    kept = storage.get_store(partner_id, "S1")
    assert (kept.document == {"send": "second"}) is expected, case


def test_the_cases_cover_both_answers_of_each_rule():
    """The cases above are worth running: each rule says yes to some and no to others, and the two rules
    differ exactly on an equal version with an equal time (master data is written again, a trade record not)."""
    stored = Version.of(STORED_VERSION, STORED_AT)
    trade = {case: trade_record_replaces(Version.of(version, modified), stored) for case, version, modified in CASES}
    master = {case: master_replaces(Version.of(version, modified), stored) for case, version, modified in CASES}
    assert trade == {
        "higher version, earlier time": True,
        "lower version, later time": False,
        "equal version, later time": True,
        "equal version, earlier time": False,
        "equal version, equal time": False,
    }
    assert master == {**trade, "equal version, equal time": True}
