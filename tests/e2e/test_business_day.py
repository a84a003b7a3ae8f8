"""Whole business days over real HTTP: trade records, daily close, reconciliation (spec 3, 4.7-4.9)."""

from __future__ import annotations

import time

import pytest

from tests.conftest import make_partner
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, daily_close, totals_of, trade_batch, trade_record

DAY = "2026-11-20"


@pytest.fixture
def partner(backend_host):
    """Business days run on the embedded backend and on the Azure adapters (emulators)."""
    return make_partner(backend_host)


@pytest.fixture
def new_partner(backend_host):
    return lambda stores=("S1",), prefix="p": make_partner(backend_host, tuple(stores), prefix)


DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}


def open_store(partner, store_id="S1", **store_changes):
    assert partner.put("stores", stores_batch(store(store_id, **store_changes))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"), ("02", "REFUND"))).status_code == 202


def wait_for_result(partner, store_id, business_date, timeout=20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = partner.get(f"daily-close/{store_id}/{business_date}").json()
        if body["status"] in ("MATCHED", "MISMATCHED") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def test_a_consistent_day_matches(partner):
    open_store(partner)
    records = [
        trade_record("S1", DAY, [Line("P-BURGER", 2, 550), Line("P-COLA", 1, 199)], tax=130, tip=100),
        trade_record("S1", DAY, [Line("P-FRIES", -1, 299)], source_type="02", tax=-24),
    ]
    response = partner.post("trade-records", trade_batch("S1", DAY, records))
    assert response.status_code == 202, response.text
    assert response.json()["record_count"] == 2
    expected = totals_of(records, {"01", "02"}, DIRECTIONS)
    status = partner.get(f"daily-close/S1/{DAY}").json()
    assert status["status"] == "NOT_RECEIVED" and status["expected"] is None
    close = partner.post("daily-close", daily_close("S1", DAY, expected))
    assert close.status_code == 202, close.text
    received = partner.get(f"daily-close/S1/{DAY}").json()
    assert received["status"] == "RECEIVED" and received["actual"] is None and received["checked_at"] is None
    result = wait_for_result(partner, "S1", DAY)
    assert result["status"] == "MATCHED", result
    assert result["differences"] == []
    assert result["actual"] == expected


def push(partner, store_id, records, batch_seq=1, business_date=DAY):
    response = partner.post("trade-records", trade_batch(store_id, business_date, records, batch_seq))
    assert response.status_code == 202, response.text
    return response.json()


def close_and_wait(partner, store_id, totals, business_date=DAY, **changes):
    response = partner.post("daily-close", daily_close(store_id, business_date, totals, **changes))
    assert response.status_code == 202, response.text
    return wait_for_result(partner, store_id, business_date)


def test_a_missing_transaction_is_mismatched_then_matches_after_it_is_sent(partner):
    open_store(partner)
    sent = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)
    missing = trade_record("S1", DAY, [Line("P-COLA", 2, 199)], tax=32)
    push(partner, "S1", [sent])
    expected = totals_of([sent, missing], {"01"}, DIRECTIONS)
    result = close_and_wait(partner, "S1", expected, batch_count=2)
    assert result["status"] == "MISMATCHED"
    assert result["differences"] == [
        "trade_record_count",
        "item_row_count",
        "payment_row_count",
        "net_sales_amount",
        "tax_amount",
        "payment_total_amount",
    ]
    assert result["checked_at"].endswith("Z")
    assert result["details"]["missing_batch_seqs"] == [2]
    assert result["details"]["raw_differences"]["trade_record_count"] == -1

    push(partner, "S1", [missing], batch_seq=2)
    assert close_and_wait(partner, "S1", expected, batch_count=2)["status"] == "MATCHED"


def test_a_correction_by_version_replaces_the_old_amounts(partner):
    open_store(partner)
    first = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)
    corrected = trade_record(
        "S1",
        DAY,
        [Line("P-BURGER", 2, 550)],
        tax=88,
        version=2,
        trade_record_id=first["trade_record_id"],
        last_modified_at="2026-11-20T21:00:00Z",
    )
    push(partner, "S1", [first])
    push(partner, "S1", [corrected], batch_seq=2)
    push(partner, "S1", [first], batch_seq=3)  # the old version arriving late changes nothing
    assert (
        close_and_wait(partner, "S1", totals_of([corrected], {"01"}, DIRECTIONS), batch_count=3)["status"] == "MATCHED"
    )


def test_equal_versions_are_decided_by_last_modified_at(partner):
    open_store(partner)
    earlier = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], last_modified_at="2026-11-20T20:00:00Z")
    later = trade_record(
        "S1",
        DAY,
        [Line("P-BURGER", 3, 550)],
        trade_record_id=earlier["trade_record_id"],
        last_modified_at="2026-11-20T20:00:01Z",
    )
    push(partner, "S1", [later])
    push(partner, "S1", [earlier], batch_seq=2)
    assert close_and_wait(partner, "S1", totals_of([later], {"01"}, DIRECTIONS), batch_count=2)["status"] == "MATCHED"


def test_a_later_version_may_move_a_transaction_to_another_day(partner):
    open_store(partner)
    other_day = "2026-11-21"
    first = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)])
    moved = trade_record(
        "S1",
        other_day,
        [Line("P-BURGER", 1, 550)],
        version=2,
        trade_record_id=first["trade_record_id"],
        opened_at="2026-11-21T12:00:00-05:00",
    )
    push(partner, "S1", [first])
    push(partner, "S1", [moved], business_date=other_day)
    push(partner, "S1", [first], batch_seq=2)  # stale: still belongs to the other day
    empty = totals_of([], {"01"}, DIRECTIONS)
    assert close_and_wait(partner, "S1", empty, batch_count=2)["status"] == "MATCHED"
    assert (
        close_and_wait(partner, "S1", totals_of([moved], {"01"}, DIRECTIONS), business_date=other_day)["status"]
        == "MATCHED"
    )


def _one_minor_unit_off(totals: dict, field: str, exponent: int, units: int) -> dict:
    from decimal import Decimal

    shifted = Decimal(totals[field]) + Decimal(units).scaleb(-exponent)
    return {**totals, field: f"{shifted:.{exponent}f}"}


def test_amounts_within_one_minor_unit_match_in_usd(partner):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)
    push(partner, "S1", [record])
    totals = totals_of([record], {"01"}, DIRECTIONS)
    assert close_and_wait(partner, "S1", _one_minor_unit_off(totals, "net_sales_amount", 2, 1))["status"] == "MATCHED"
    result = close_and_wait(partner, "S1", _one_minor_unit_off(totals, "net_sales_amount", 2, 2))
    assert result["status"] == "MISMATCHED" and result["differences"] == ["net_sales_amount"]


def test_amounts_within_one_minor_unit_match_in_jpy(new_partner):
    partner = new_partner(stores=("T1",))
    open_store(
        partner,
        "T1",
        country_code="JP",
        currency="JPY",
        time_zone="Asia/Tokyo",
        locale="ja-JP",
        prices_include_tax=True,
    )
    record = trade_record(
        "T1",
        DAY,
        [Line("P-RAMEN", 2, 980)],
        currency="JPY",
        exponent=0,
        tax=178,
        prices_include_tax=True,
        opened_at="2026-11-20T12:00:00+09:00",
    )
    push(partner, "T1", [record])
    totals = totals_of([record], {"01"}, DIRECTIONS, exponent=0)
    close = lambda t: close_and_wait(partner, "T1", t, currency="JPY")  # noqa: E731
    assert close(_one_minor_unit_off(totals, "payment_total_amount", 0, -1))["status"] == "MATCHED"
    result = close(_one_minor_unit_off(totals, "payment_total_amount", 0, 2))
    assert result["status"] == "MISMATCHED" and result["differences"] == ["payment_total_amount"]


def test_deposit_applied_is_not_counted_again_and_refunds_are_subtracted(partner):
    open_store(partner)
    deposit = trade_record("S1", DAY, [Line("P-CAKE", 1, 3000)], payments=[Pay(1000, "DEPOSIT", "CREDIT_CARD")])
    pickup = trade_record(
        "S1",
        DAY,
        [Line("P-CAKE", 1, 3000)],
        payments=[Pay(1000, "DEPOSIT_APPLIED", "CREDIT_CARD"), Pay(2000, "SALE", "CREDIT_CARD")],
    )
    refund = trade_record("S1", DAY, [Line("P-COLA", -1, 199)], source_type="02")
    push(partner, "S1", [deposit, pickup, refund])
    totals = totals_of([deposit, pickup, refund], {"01", "02"}, DIRECTIONS)
    deposit_and_sale = 1000 + 2000
    assert totals["payment_total_amount"] == f"{(deposit_and_sale - 199) / 100:.2f}"
    assert close_and_wait(partner, "S1", totals)["status"] == "MATCHED"


def test_an_unmapped_code_counts_toward_revenue_only_after_its_mapping_arrives(partner):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], source_type="99")
    response = push(partner, "S1", [record])
    assert response["status"] == "ACCEPTED"
    totals = totals_of([record], {"01", "99"}, DIRECTIONS)
    result = close_and_wait(partner, "S1", totals)
    assert result["status"] == "MISMATCHED" and result["differences"] == ["net_sales_amount"]
    assert result["details"]["unmapped_source_codes"] == ["99"]

    mapping = partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"), ("02", "REFUND"), ("99", "SALE")))
    assert mapping.status_code == 202
    deadline = time.monotonic() + 20
    while partner.get(f"daily-close/S1/{DAY}").json()["status"] != "MATCHED" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert partner.get(f"daily-close/S1/{DAY}").json()["status"] == "MATCHED"


def test_a_new_close_replaces_the_old_one_and_goes_back_to_received(partner):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)])
    push(partner, "S1", [record])
    totals = totals_of([record], {"01"}, DIRECTIONS)
    assert close_and_wait(partner, "S1", {**totals, "trade_record_count": 5})["status"] == "MISMATCHED"
    assert partner.post("daily-close", daily_close("S1", DAY, totals)).status_code == 202
    assert partner.get(f"daily-close/S1/{DAY}").json()["status"] == "RECEIVED"
    assert wait_for_result(partner, "S1", DAY)["status"] == "MATCHED"


def test_closes_and_results_are_per_partner(new_partner):
    first, second = new_partner(stores=("S1",)), new_partner(stores=("S1",))
    open_store(first)
    open_store(second)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)])
    push(first, "S1", [record])
    assert close_and_wait(first, "S1", totals_of([record], {"01"}, DIRECTIONS))["status"] == "MATCHED"
    assert second.get(f"daily-close/S1/{DAY}").json()["status"] == "NOT_RECEIVED"
    assert close_and_wait(second, "S1", totals_of([], {"01"}, DIRECTIONS))["status"] == "MATCHED"
    assert first.get("daily-close/S2/2026-11-20").status_code == 403


def test_hq_reconcile_run_and_show(new_partner, backend_host):
    host = backend_host
    partner = new_partner(stores=("S1",))
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)])
    push(partner, "S1", [record])
    totals = totals_of([record], {"01"}, DIRECTIONS)
    close_and_wait(partner, "S1", {**totals, "tip_amount": "1.00"})
    shown = host.hq("reconcile", "show", partner.partner_id, "S1", DAY)
    assert shown.returncode == 0, shown.stderr
    assert "MISMATCHED" in shown.stdout
    tip_row = next(line for line in shown.stdout.splitlines() if line.startswith("tip_amount"))
    assert tip_row.split() == ["tip_amount", "1.00", "0.00", "-1.00", "DIFFERS"]  # actual - expected
    ran = host.hq("reconcile", "run", partner.partner_id, "S1", DAY)
    assert ran.returncode == 0 and "MISMATCHED" in ran.stdout
    missing = host.hq("reconcile", "run", partner.partner_id, "S1", "2026-01-01")
    assert missing.returncode == 1 and "no daily close" in missing.stderr
    bad = host.hq("reconcile", "show", partner.partner_id, "S1", "01/01/2026")
    assert bad.returncode == 1 and "YYYY-MM-DD" in bad.stderr


def test_the_sweep_reenqueues_a_close_whose_message_was_lost(tmp_path):
    import sqlite3

    from tests.conftest import start_host

    sweeping = start_host(
        tmp_path, RECONCILE_DELAY_SECONDS="2", RECONCILE_SWEEP_GRACE_SECONDS="1", RECONCILE_SWEEP_SCHEDULE="* * * * * *"
    )
    try:
        partner = make_partner(sweeping)
        open_store(partner)
        assert partner.post("daily-close", daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS))).status_code == 202
        with sqlite3.connect(sweeping.data_dir / "queue.sqlite3") as queue:
            lost = queue.execute("DELETE FROM queue_messages").rowcount
        assert lost == 1
        assert wait_for_result(partner, "S1", DAY)["status"] == "MATCHED"
        assert "sweep re-enqueued 1 overdue" in sweeping.log()
    finally:
        sweeping.stop()
