"""The per-record problems of a parsed batch (ingest.trade_records.record_problems) on both kinds of batch (the
fast path's msgspec Structs and the slow way's dataclasses): repeats of line_no and payment_id, the currency
against the store's, amounts in another currency (one reader per currency, noting into the batch's list), in
the records' order."""

from __future__ import annotations

import datetime as dt

import orjson
import pytest

from core.records import StoreMaster
from ingest.one_parse import read_batch, validated_once
from ingest.trade_records import record_problems
from ingest.wire.requests import TradeRecordsBatch
from tests.trade_payloads import Line, Pay, trade_batch, trade_record

DAY = "2026-11-20"
STORE = StoreMaster(
    store_id="S1",
    currency="USD",
    country_code="US",
    time_zone="America/New_York",
    workday_start="04:00",
    prices_include_tax=False,
    last_modified_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
    document={},
)


def batches(records: list[dict]) -> list[TradeRecordsBatch]:
    """The batch as the fast path reads it (when it confirms it) and as the slow way does."""
    body = orjson.dumps(trade_batch("S1", DAY, records))
    read = read_batch(TradeRecordsBatch, body)
    assert read is not None
    fast = validated_once(TradeRecordsBatch, body, read, 2)
    slow = TradeRecordsBatch.model_validate_json(body)
    return [slow] if fast is None else [fast, slow]


def problems_of(records: list[dict]) -> list[tuple[str, str]]:
    """(path, message) of every problem, the same on both kinds of batch."""
    answers = []
    for batch in batches(records):
        problems, amounts = record_problems(batch, STORE, 2)
        assert len(amounts) == len(records)
        answers.append([(problem.path, problem.message) for problem in problems])
    assert all(answer == answers[0] for answer in answers)
    return answers[0]


def lines(count: int) -> list[Line]:
    return [Line(f"P-{number}", 1, 100 + number) for number in range(count)]


def test_a_batch_without_repeats_has_no_problems():
    one_of_each = trade_record("S1", DAY, lines(1))
    several = trade_record("S1", DAY, lines(4), payments=[Pay(200), Pay(206, "CARD")])
    assert problems_of([one_of_each, several]) == []


def test_every_repeat_of_a_line_no_and_a_payment_id_names_its_first_use():
    record = trade_record("S1", DAY, lines(4), payments=[Pay(100), Pay(100), Pay(206)])
    for item in record["items"][1:]:
        item["line_no"] = 7
    record["payments"][2]["payment_id"] = record["payments"][0]["payment_id"]
    assert problems_of([trade_record("S1", DAY, lines(2)), record]) == [
        ("trade_records[1].items[2].line_no", "duplicate of trade_records[1].items[1].line_no"),
        ("trade_records[1].items[3].line_no", "duplicate of trade_records[1].items[1].line_no"),
        ("trade_records[1].payments[2].payment_id", "duplicate of trade_records[1].payments[0].payment_id"),
    ]


def test_records_in_other_currencies_are_read_in_theirs_in_the_records_order():
    # JPY has no minor units: its amounts with two places are problems of their own, after the currency's;
    # the EUR record (two places, as USD) only differs from the store's currency
    jpy = trade_record("S1", DAY, [Line("P-RAMEN", 1, 980)], currency="JPY")
    eur = trade_record("S1", DAY, [Line("P-TEA", 1, 250)], currency="EUR")
    repeated = trade_record("S1", DAY, lines(2))
    repeated["items"][1]["line_no"] = 1
    problems = problems_of([jpy, eur, repeated, trade_record("S1", DAY, lines(1), currency="JPY")])
    paths = [path for path, _ in problems]
    assert paths[0] == "trade_records[0].currency"
    assert {path.split(".")[0] for path in paths[1:11]} == {"trade_records[0]"}
    assert problems[1] == ("trade_records[0].subtotal_amount", "JPY amounts have no decimal places (for example 1200)")
    expected_after = ["trade_records[1].currency", "trade_records[2].items[1].line_no", "trade_records[3].currency"]
    assert [path for path in paths if not path.startswith("trade_records[0]")][:3] == expected_after
    assert paths.index("trade_records[3].currency") < paths.index("trade_records[3].subtotal_amount")


@pytest.mark.parametrize("outer", ["store_id", "business_date"])
def test_a_record_of_another_store_day_is_named(outer):
    other = trade_record("S1", DAY, lines(1))
    other[outer] = "S2" if outer == "store_id" else (dt.date(2026, 11, 19)).isoformat()
    assert problems_of([trade_record("S1", DAY, lines(1)), other]) == [
        (f"trade_records[1].{outer}", f"must equal the outer {outer}")
    ]
