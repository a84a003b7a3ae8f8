"""The checks of the writes without storage (decision 0082): each write's `check` is
called with a parsed batch and hand-built reads (`needs`), as its use case calls it after `read_needs`.
The use cases themselves are tested end to end (tests/e2e) and on the in-memory storage (test_use_cases.py)."""

from __future__ import annotations

import inspect
import typing

import orjson
import pytest

from core import ports
from ingest import daily_close, mappings, products, stores, trade_records
from ingest.trade_batches import trade_records_meaning
from ingest.trade_records import OpenedRecords, RecordsNeeds
from ingest.wire.requests import DailyClose, MappingsBatch, ProductsBatch, TradeRecordsBatch
from ingest.write_flow import Opened
from tests.payloads import mapping_batch, product, products_batch
from tests.trade_payloads import Line, Pay, totals_of, trade_batch, trade_record
from tests.trade_payloads import daily_close as close_payload
from tests.unit.test_record_problems import DAY, STORE

NEEDS = RecordsNeeds(
    store=STORE, standard_of={"01": "SALE"}, payment_types={"SALE", "REFUND"}, payment_id_users={}, batch_seq_twins=[]
)


def opened(records: list[dict], unknown: list[tuple[str | int, ...]] | None = None) -> OpenedRecords:
    """A batch of records as the prologue hands it on, read the slow way (no places confirmed)."""
    body = orjson.dumps(trade_batch("S1", DAY, records))
    return OpenedRecords(TradeRecordsBatch.model_validate_json(body), body, unknown or [], None, None)


def codes(checked: trade_records.CheckedRecords) -> list[tuple[str, str]]:
    return [(warning.code, warning.path) for warning in checked.warnings]


def burger(**changes: typing.Any) -> dict:
    return trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88, **changes)


def test_a_batch_that_checks_out_has_no_problem_nor_warning_and_gives_its_rows_and_what_it_says():
    batch = opened([burger(), burger()])

    checked = trade_records.check(batch, NEEDS)

    assert (checked.problems, checked.warnings) == ([], [])
    assert [row.trade_record_id for row in checked.rows] == [r.trade_record_id for r in batch.batch.trade_records]
    assert [row.total_minor for row in checked.rows] == [1188, 1188]
    assert checked.meaning == trade_records_meaning(batch.batch)


def test_a_store_without_master_data_is_the_one_problem_whatever_else():
    checked = trade_records.check(opened([burger(currency="EUR")]), RecordsNeeds(None, {}, set(), {}, []))

    assert [(p.path, p.message) for p in checked.problems] == [
        (
            "store_id",
            "no store master data for S1 yet; send it with PUT /stores before its transactions and daily close",
        )
    ]
    assert (checked.warnings, checked.rows) == ([], [])


def test_the_records_problems_refuse_the_batch_before_any_warning_is_looked_for():
    reused = burger()
    users = {reused["payments"][0]["payment_id"]: {"T-OTHER"}}  # would warn PAYMENT_ID_REUSED
    needs = RecordsNeeds(STORE, {}, set(), users, ["another batch"])  # and SOURCE_TYPE_UNMAPPED, BATCH_SEQ_REPEATED

    checked = trade_records.check(opened([reused, burger(currency="EUR")]), needs)

    assert [(p.path, p.message) for p in checked.problems] == [
        ("trade_records[1].currency", "must equal the store currency (USD)")
    ]
    assert (checked.warnings, checked.rows) == ([], [])


def test_the_warnings_follow_what_was_read_in_a_stable_order():
    first, second = burger(), trade_record("S1", DAY, [Line("P-TEA", 1, 300)], payments=[Pay(300, "VOUCHER")])
    batch = opened([first, second], unknown=[("trade_records", 1, "tip_amout"), ("note",)])
    needs = RecordsNeeds(
        STORE,
        standard_of={},  # the mapping does not know "01"
        payment_types={"SALE"},  # VOUCHER has no direction
        payment_id_users={first["payments"][0]["payment_id"]: {"T-OTHER"}},
        batch_seq_twins=[batch.batch.batch_key, "an-earlier-batch"],  # this very batch (a retry) is not another
    )

    checked = trade_records.check(batch, needs)

    assert checked.problems == []
    assert codes(checked) == [
        ("SOURCE_TYPE_UNMAPPED", "trade_records[0]"),
        ("SOURCE_TYPE_UNMAPPED", "trade_records[1]"),
        ("PAYMENT_TYPE_UNKNOWN_DIRECTION", "trade_records[1]"),
        ("PAYMENT_ID_REUSED", "trade_records[0]"),
        ("BATCH_SEQ_REPEATED", "$"),
        ("UNKNOWN_MEMBER_IGNORED", "trade_records[1]"),
        ("UNKNOWN_MEMBER_IGNORED", "$"),
    ]
    assert "in another batch;" in checked.warnings[4].message  # one other: this very batch is not counted
    assert len(checked.rows) == 2  # warnings never stop a batch


def test_a_retry_of_the_same_batch_is_no_repeated_batch_seq():
    batch = opened([burger()])
    needs = RecordsNeeds(STORE, {"01": "SALE"}, {"SALE"}, {}, [batch.batch.batch_key])

    assert trade_records.check(batch, needs).warnings == []


def test_values_sent_as_empty_strings_are_told_only_for_a_batch_read_the_slow_way():
    record = burger(closed_at="")
    slow = opened([record])
    confirmed = OpenedRecords(slow.batch, slow.body, [], 2, None)  # as if the one parse had confirmed it

    assert codes(trade_records.check(slow, NEEDS)) == [("EMPTY_VALUE_READ_AS_ABSENT", "trade_records[0]")]
    assert codes(trade_records.check(confirmed, NEEDS)) == []  # the one parse refuses "" there: never met


# -- the other writes ------------------------------------------------------------------------------


def products_opened(payload: dict) -> Opened[ProductsBatch]:
    body = orjson.dumps(payload)
    return Opened(ProductsBatch.model_validate_json(body), body, [])


def test_a_store_specific_product_is_priced_in_its_stores_currency_once_the_store_is_known():
    batch = products_opened(
        products_batch([product("P-1", store_id="S1", currency="USD"), product("P-2", store_id="S2", currency="USD")])
    )

    checked = products.check(batch, {"S1": "JPY", "S2": None})  # S2 has no master data yet: not compared

    assert [(p.path, p.message) for p in checked.problems] == [
        ("products[0].currency", "must equal the currency of store S1 (JPY)")
    ]
    assert products.check(batch, {"S1": "USD", "S2": None}).problems == []


def test_a_mapping_tells_the_source_codes_whose_standard_type_it_changes():
    body = orjson.dumps(mapping_batch(("01", "SALE"), ("02", "REFUND")))
    batch = Opened(MappingsBatch.model_validate_json(body), body, [])

    checked = mappings.check(batch, {"01": "SALE", "02": "SALE", "03": "VOID"})

    assert checked.problems == []
    assert checked.changed == {"02", "03"}
    assert [entry["source_code"] for entry in checked.entries] == ["01", "02"]


def test_a_close_needs_its_stores_master_data_then_its_currency():
    totals = totals_of([burger()], {"01"}, {"SALE": 1})
    body = orjson.dumps(close_payload("S1", DAY, totals, currency="EUR"))
    close = Opened(DailyClose.model_validate_json(body), body, [])

    assert [p.path for p in daily_close.check(close, daily_close.CloseNeeds(None)).problems] == ["store_id"]
    assert [p.path for p in daily_close.check(close, daily_close.CloseNeeds(STORE)).problems] == ["currency"]


# The parts of the Storage port (core/ports.py): a parameter annotated with one of them, or with a protocol made
# of them, is given storage.
STORAGE_PARTS = {part for part in ports.Storage.__mro__ if part.__module__ == ports.__name__}


def storage_parameters(function: typing.Callable[..., object]) -> list[str]:
    hints = typing.get_type_hints(function)
    return [
        name
        for name, kind in hints.items()
        if name != "return" and inspect.isclass(kind) and STORAGE_PARTS & set(kind.__mro__)
    ]


@pytest.mark.parametrize("write", [stores, products, mappings, trade_records, daily_close])
def test_each_write_checks_without_storage_and_reads_and_saves_with_it(write):
    """The shape every write keeps: `check` takes no storage (its reads come from `read_needs`, which
    PUT /stores does not need), `save` does."""
    assert storage_parameters(write.check) == []
    assert storage_parameters(write.save) == ["storage"]
    if write is not stores:
        assert storage_parameters(write.read_needs) == ["storage"]
    assert storage_parameters(write.open_batch if write is not trade_records else write.open_trade_records) == [
        "storage"
    ]
