"""examples/: the example business day is clean, covers the interface's cases, and reconciles.

The push script runs as a partner would run it, as a subprocess against the session's local host
(RECONCILE_DELAY_SECONDS is 1 there). The daily closes in examples/day are the POS's own control
totals; MATCHED proves they agree with what HQ computes from the trade records.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
import uuid
import zoneinfo
from decimal import Decimal
from pathlib import Path

from tests.conftest import make_partner

ROOT = Path(__file__).resolve().parents[2]
DAY_DIR = ROOT / "examples" / "day"
SCRIPT = ROOT / "examples" / "push_day.py"
BUSINESS_DATE = "2026-11-20"
STORES = ("NYC-001", "TKY-001")
RESPONSE_LINE = re.compile(r"^(PUT|POST) (\S+) .* -> (\d{3}) (\S+) record_count=(\d+) warnings=(\d+)$", re.M)
EXPONENT = {"USD": 2, "JPY": 0}


def load(name: str):
    return json.loads((DAY_DIR / name).read_text(encoding="utf-8"))


def batches(store_id: str) -> list[dict]:
    data = load(f"trade-records-{store_id}.json")
    return data if isinstance(data, list) else [data]


def all_records() -> list[dict]:
    return [record for store_id in STORES for batch in batches(store_id) for record in batch["trade_records"]]


def run_script(host, key: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--base-url", host.base_url, "--key", key, "--timeout", "60", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


def assert_clean_run(
    run: subprocess.CompletedProcess, key: str, statuses: set[str], repeated_seqs: bool = False
) -> None:
    """repeated_seqs: the trade record batches were sent before with the same batch_seqs under other
    batch_ids, so each says BATCH_SEQ_REPEATED (and nothing else)."""
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    responses = RESPONSE_LINE.findall(run.stdout)
    # stores, products, mapping, 2 + 1 trade-record batches, 2 daily closes
    assert len(responses) == 8, output
    assert {status for *_, status, _count, _warnings in responses} == statuses, output
    expected = [("1" if repeated_seqs and response[1] == "/trade-records" else "0") for response in responses]
    assert [warnings for *_, warnings in responses] == expected, output
    warned = re.findall(r"^\s+warning (\S+)", run.stdout, re.M)
    assert warned == (["BATCH_SEQ_REPEATED"] * 3 if repeated_seqs else []), output
    for store_id in STORES:
        assert re.search(rf"^{store_id} {BUSINESS_DATE}: MATCHED ", run.stdout, re.M), output
    assert "result: all 2 store-day(s) MATCHED" in run.stdout
    assert key not in output


def checked_at(run: subprocess.CompletedProcess) -> dict[str, str]:
    found = dict(re.findall(rf"^(\S+) {BUSINESS_DATE}: MATCHED \(checked_at (\S+)\)$", run.stdout, re.M))
    assert set(found) == set(STORES), run.stdout
    return found


def test_the_example_day_reconciles_clean_and_re_runs(backend_host):
    partner = make_partner(backend_host, STORES)  # on both backends: SQLite and the Azure emulators

    first = run_script(partner.host, partner.key)
    assert_clean_run(first, partner.key, {"ACCEPTED"})

    # A plain resend changes nothing: ALREADY_RECEIVED, and the earlier results stand.
    again = run_script(partner.host, partner.key)
    assert_clean_run(again, partner.key, {"ALREADY_RECEIVED"})
    assert checked_at(again) == checked_at(first)

    # New batch ids: everything is stored again and both days are reconciled again.
    fresh = run_script(partner.host, partner.key, "--fresh-batch-ids")
    assert_clean_run(fresh, partner.key, {"ACCEPTED"}, repeated_seqs=True)
    assert all(checked_at(fresh)[store_id] != checked_at(first)[store_id] for store_id in STORES)
    for store_id in STORES:
        result = partner.get(f"daily-close/{store_id}/{BUSINESS_DATE}").json()
        assert result["status"] == "MATCHED" and result["differences"] == [], result


def test_the_script_reports_http_errors_without_the_key(host):
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--base-url", host.base_url, "--timeout", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "POS_API_KEY": "not-a-valid-key-0123456789"},
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "401" in run.stderr and "UNAUTHORIZED" in run.stderr
    assert "not-a-valid-key-0123456789" not in run.stdout + run.stderr


# --- the data covers the cases it is meant to show -------------------------------------------------------


def test_batch_ids_are_fixed_distinct_uuids():
    bodies = [
        load("stores.json"),
        load("products.json"),
        load("mapping.json"),
        *(batch for store_id in STORES for batch in batches(store_id)),
        *(load(f"daily-close-{store_id}.json") for store_id in STORES),
    ]
    ids = [str(uuid.UUID(body["batch_id"])) for body in bodies]
    assert ids == [body["batch_id"] for body in bodies]
    assert len(set(ids)) == len(ids)


def test_the_stores_differ_in_currency_and_tax_display():
    stores = {store["store_id"]: store for store in load("stores.json")["stores"]}
    assert set(stores) == set(STORES)
    assert {store["currency"] for store in stores.values()} == {"USD", "JPY"}
    assert {store["prices_include_tax"] for store in stores.values()} == {True, False}
    assert stores["NYC-001"]["workday_start"] == "04:00"
    for store_id in STORES:
        for record in (r for batch in batches(store_id) for r in batch["trade_records"]):
            assert record["currency"] == stores[store_id]["currency"]
            assert record["prices_include_tax"] == stores[store_id]["prices_include_tax"]


def test_every_case_of_the_day_is_present():
    standard_of = {m["source_code"]: m["standard_code"] for m in load("mapping.json")["mappings"]}
    records = all_records()
    payments = [p for r in records for p in r["payments"]]

    assert {standard_of[r["source_transaction_type"]] for r in records} == {
        "SALE",
        "REFUND",
        "RETURN",
        "EXCHANGE",
        "VOID",
        "NO_SALE",
    }
    assert {"SALE", "REFUND", "DEPOSIT", "DEPOSIT_APPLIED"} <= {p["payment_type"] for p in payments}
    assert len({p["payment_method"] for p in payments}) >= 5
    assert any(p.get("card_last4") for p in payments)

    deposits = {p["payment_method"] for p in payments if p["payment_type"] == "DEPOSIT"}
    applied = {p["payment_method"] for p in payments if p["payment_type"] == "DEPOSIT_APPLIED"}
    assert applied and applied <= deposits  # applied with the instrument of the deposit

    assert any(
        r["order_type"] == "DELIVERY"
        and r["order_source"] == "DELIVERY_PLATFORM"
        and r.get("order_source_detail") == "UberEats"
        for r in records
    )
    assert any(Decimal(r["tip_amount"]) > 0 for r in records)
    assert any(Decimal(r["service_charge_amount"]) > 0 for r in records)

    by_id = {r["trade_record_id"]: r for r in records}
    refunds = [r for r in records if standard_of[r["source_transaction_type"]] == "REFUND"]
    assert refunds and all(
        r["original_trade_record_id"] in by_id
        and Decimal(r["total_amount"]) < 0
        and {p["payment_type"] for p in r["payments"]} == {"REFUND"}
        for r in refunds
    )
    exchanges = [r for r in records if standard_of[r["source_transaction_type"]] == "EXCHANGE"]
    assert exchanges and all(r["original_trade_record_id"] in by_id for r in exchanges)
    for exchange in exchanges:
        amounts = [Decimal(item["line_amount"]) for item in exchange["items"]]
        assert min(amounts) < 0 < max(amounts)
    voids = [r for r in records if standard_of[r["source_transaction_type"]] == "VOID"]
    assert voids and all(r["status"] == "VOIDED" and r["payments"] == [] for r in voids)
    no_sales = [
        r
        for r in records
        if standard_of[r["source_transaction_type"]] == "NO_SALE" and r["source_transaction_type"] == "NS1"
    ]
    assert no_sales and all(r["payments"] == [] and Decimal(r["total_amount"]) == 0 for r in no_sales)


def test_combos_and_modifiers_follow_the_recording_rules():
    upgraded_combo = paid_modifier = False
    for record in all_records():
        lines = {item["line_no"]: item for item in record["items"]}
        for item in record["items"]:
            deltas = sum(Decimal(m["price_delta"]) for m in item["modifiers"])
            if item["product_type"] == "COMBO":
                children = [c for c in record["items"] if c["parent_line_no"] == item["line_no"]]
                assert len(children) == 3, record["trade_record_id"]
                upgraded_combo |= deltas > 0
            elif item["parent_line_no"] is None:
                paid_modifier |= deltas > 0
            if item["parent_line_no"] is not None:
                assert lines[item["parent_line_no"]]["product_type"] == "COMBO"
                assert Decimal(item["unit_price"]) == 0 and item["modifiers"] == []
    assert upgraded_combo and paid_modifier


def test_amounts_follow_the_identities_and_the_currency_places():
    for record in all_records():
        places = EXPONENT[record["currency"]]
        amounts = [
            record[name]
            for name in (
                "subtotal_amount",
                "discount_amount",
                "tax_amount",
                "service_charge_amount",
                "tip_amount",
                "rounding_amount",
                "total_amount",
            )
        ]
        for item in record["items"]:
            amounts += [item["unit_price"], item["discount_amount"], item["line_amount"]]
            amounts += [m["price_delta"] for m in item["modifiers"]]
            assert Decimal(item["quantity"]) * Decimal(item["unit_price"]) - Decimal(
                item["discount_amount"]
            ) == Decimal(item["line_amount"])
        amounts += [p["amount"] for p in record["payments"]] + [p["tip_amount"] for p in record["payments"]]
        for text in amounts:
            assert len(text.partition(".")[2]) == places, (record["trade_record_id"], text)
        value = {
            name: Decimal(record[f"{name}_amount"])
            for name in ("subtotal", "discount", "tax", "service_charge", "tip", "rounding", "total")
        }
        expected_total = (
            value["subtotal"]
            - value["discount"]
            + value["service_charge"]
            + value["tip"]
            + value["rounding"]
            + (0 if record["prices_include_tax"] else value["tax"])
        )
        assert expected_total == value["total"], record["trade_record_id"]
        counted = [
            Decimal(item["line_amount"])
            for item in record["items"]
            if item["parent_line_no"] is None and not item["is_voided"]
        ]
        assert sum(counted) == value["subtotal"], record["trade_record_id"]
        if record["payments"] and record["status"] != "VOIDED":
            assert sum(Decimal(p["amount"]) for p in record["payments"]) == abs(value["total"])


def test_opened_at_gives_the_business_date_including_the_late_night_sales():
    stores = {store["store_id"]: store for store in load("stores.json")["stores"]}
    late_night = set()
    for record in all_records():
        store = stores[record["store_id"]]
        local = dt.datetime.fromisoformat(record["opened_at"]).astimezone(zoneinfo.ZoneInfo(store["time_zone"]))
        start = dt.time.fromisoformat(store["workday_start"])
        business_date = local.date() - dt.timedelta(days=1) if local.time() < start else local.date()
        assert business_date.isoformat() == record["business_date"] == BUSINESS_DATE, record["trade_record_id"]
        if local.date().isoformat() != BUSINESS_DATE:
            late_night.add(record["store_id"])
    assert late_night == set(STORES)


def test_member_ids_are_internal_ids():
    members = {r["member_id"] for r in all_records() if r.get("member_id")}
    assert members and all(re.fullmatch(r"M-\d{6}", member) for member in members)


def test_on_timeout_the_script_says_when_each_day_is_due_and_how_to_reconcile_it_now(tmp_path):
    from tests.conftest import start_host

    slow = start_host(tmp_path, RECONCILE_DELAY_SECONDS="600")  # the default is 900: a newcomer's first run
    try:
        assert "reconciled 600 s (10 min) after they arrive (RECONCILE_DELAY_SECONDS)" in slow.log()
        partner = make_partner(slow, STORES)
        started = dt.datetime.now(dt.UTC)
        waited = subprocess.run(
            [sys.executable, str(SCRIPT), "--base-url", slow.base_url, "--key", partner.key, "--timeout", "2"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert waited.returncode == 1, waited.stdout + waited.stderr
        out = waited.stdout
        assert "still RECEIVED after 2s (timeout)" in out and "RECONCILE_DELAY_SECONDS" in out
        for store_id in STORES:
            due = re.search(rf"^  {store_id} {BUSINESS_DATE} is due at (\S+)$", out, re.M).group(1)
            delay = dt.datetime.fromisoformat(due.replace("Z", "+00:00")) - started
            assert dt.timedelta(seconds=590) < delay < dt.timedelta(seconds=610), out
            assert f"python -m hq reconcile run {partner.partner_id} {store_id} {BUSINESS_DATE}" in out
        assert partner.key not in out

        for store_id in STORES:  # doing what it says: reconcile now, then the same run reads the results
            assert (
                "MATCHED" in slow.hq_in_process("reconcile", "run", partner.partner_id, store_id, BUSINESS_DATE).stdout
            )
        assert_clean_run(run_script(slow, partner.key), partner.key, {"ALREADY_RECEIVED"})
    finally:
        slow.stop()
