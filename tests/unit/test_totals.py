"""Reconciliation totals and comparison, rule by rule, without HTTP or storage (reconcile/totals.py)."""

from __future__ import annotations

import datetime as dt

from core.records import SourceTypeTotals, StoreDayTotals, TradeRecordRow
from reconcile.totals import (
    AMOUNT_FIELDS,
    COUNT_FIELDS,
    compute_totals,
    differences,
    expected_minor,
    raw_differences,
)
from reference.codes import payment_directions_in_effect

DAY = dt.date(2026, 11, 20)
MAPPING = {"01": "SALE", "02": "REFUND", "09": "VOID", "10": "NO_SALE", "EX": "EXCHANGE"}
DIRECTIONS = payment_directions_in_effect({})


def row(total=1000, tax=80, tip=0, items=1, source="01", payments=None, record_id=None) -> TradeRecordRow:
    payments = {"SALE": total} if payments is None else payments
    return TradeRecordRow(
        record_id or f"T{total}{source}{tip}",
        1,
        dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
        "S1",
        DAY,
        source,
        items,
        len(payments),
        total,
        tax,
        tip,
        payments,
    )


def summed(rows) -> StoreDayTotals:
    """The sums a store gives for a store-day holding `rows`."""
    return StoreDayTotals.of_records(
        (
            r.source_transaction_type,
            r.item_rows,
            r.payment_rows,
            r.total_minor,
            r.tax_minor,
            r.tip_minor,
            r.payments_minor,
        )
        for r in rows
    )


def totals_of(rows, standard_of=MAPPING, directions=DIRECTIONS):
    return compute_totals(summed(rows), standard_of, directions)


def test_records_are_summed_per_source_code_and_payments_per_payment_type():
    rows = [
        row(1000, 80, 10, items=3),
        row(-500, -40, source="02", payments={"REFUND": 500}),
        row(700, 50, items=2, payments={"SALE": 400, "REFUND": 100, "VOUCHER": 300}),
    ]
    assert summed(rows) == StoreDayTotals(
        {"01": SourceTypeTotals(2, 5, 4, 1700, 130, 10), "02": SourceTypeTotals(1, 1, 1, -500, -40, 0)},
        {"SALE": 1400, "REFUND": 600, "VOUCHER": 300},
    )
    assert summed([]) == StoreDayTotals({}, {})


def test_counts_include_every_latest_record_and_line():
    rows = [row(items=3), row(items=2, payments={}), row(items=1, source="UNMAPPED")]
    totals = totals_of(rows)
    assert totals.trade_record_count == len(rows)
    assert totals.item_row_count == sum(r.item_rows for r in rows)
    assert totals.payment_row_count == sum(r.payment_rows for r in rows)


def test_net_sales_counts_revenue_types_only_and_excludes_tax_and_tip():
    sale, refund, void, no_sale = (
        row(1200, 90, 100),
        row(-500, -40, 0, source="02"),
        row(700, 50, source="09"),
        row(0, 0, source="10"),
    )
    totals = totals_of([sale, refund, void, no_sale])
    revenue = [sale, refund]
    assert totals.net_sales_amount == sum(r.total_minor - r.tax_minor - r.tip_minor for r in revenue)
    assert totals.tax_amount == sum(r.tax_minor for r in (sale, refund, void, no_sale))
    assert totals.tip_amount == sale.tip_minor


def test_unmapped_codes_are_counted_but_not_revenue_and_are_reported():
    mapped, unmapped = row(1000), row(500, source="ZZ")
    totals = totals_of([mapped, unmapped])
    assert totals.net_sales_amount == mapped.total_minor - mapped.tax_minor
    assert totals.unmapped_source_codes == {"ZZ"}
    remapped = totals_of([mapped, unmapped], {**MAPPING, "ZZ": "SALE"})
    assert remapped.net_sales_amount == sum(r.total_minor - r.tax_minor for r in (mapped, unmapped))


def test_payment_directions_refund_subtracts_deposit_applied_is_not_counted_adjustment_is_signed():
    payments = {"SALE": 3000, "REFUND": 500, "DEPOSIT": 1000, "DEPOSIT_APPLIED": 1000, "ADJUSTMENT": -25}
    totals = totals_of([row(payments=payments)])
    assert (
        totals.payment_total_amount
        == payments["SALE"] - payments["REFUND"] + payments["DEPOSIT"] + payments["ADJUSTMENT"]
    )


def test_unknown_payment_types_are_left_out_until_hq_records_a_direction():
    payments = {"SALE": 1000, "VOUCHER_SWAP": 300}
    totals = totals_of([row(payments=payments)])
    assert totals.payment_total_amount == payments["SALE"]
    assert totals.unknown_payment_types == {"VOUCHER_SWAP"}
    known = totals_of([row(payments=payments)], directions=payment_directions_in_effect({"VOUCHER_SWAP": -1}))
    assert known.payment_total_amount == payments["SALE"] - payments["VOUCHER_SWAP"]


def _expected_from(totals, exponent=2, **shift):
    wire = totals.as_wire(exponent)
    values = expected_minor(wire, exponent)
    for name, delta in shift.items():
        values[name] += delta
    return values


def test_counts_must_be_equal_and_amounts_may_differ_by_one_minor_unit():
    totals = totals_of([row(1234, 99, 50)])
    assert differences(_expected_from(totals), totals) == []
    within = _expected_from(totals, net_sales_amount=1, tax_amount=-1, tip_amount=1, payment_total_amount=-1)
    assert differences(within, totals) == []
    beyond = _expected_from(totals, net_sales_amount=2, trade_record_count=1)
    assert differences(beyond, totals) == ["trade_record_count", "net_sales_amount"]


def test_every_field_is_compared():
    totals = totals_of([row()])
    for name in COUNT_FIELDS + AMOUNT_FIELDS:
        shift = 1 if name in COUNT_FIELDS else 2
        assert differences(_expected_from(totals, **{name: shift}), totals) == [name]


def test_jpy_has_no_minor_places_and_tolerance_is_one_yen():
    totals = totals_of([row(1980, 180)])
    wire = totals.as_wire(0)
    assert wire["net_sales_amount"] == str(1980 - 180)
    assert differences(_expected_from(totals, 0, payment_total_amount=1), totals) == []
    assert differences(_expected_from(totals, 0, payment_total_amount=2), totals) == ["payment_total_amount"]


def test_raw_differences_show_actual_minus_expected_also_within_tolerance():
    totals = totals_of([row(1000, 80)])
    expected = _expected_from(totals, tax_amount=1, item_row_count=-2)
    assert raw_differences(expected, totals, 2) == {"item_row_count": 2, "tax_amount": "-0.01"}
