"""A reconciled day never silently goes stale (decision 0048): records that change a MATCHED or MISMATCHED
store-day put it back to RECEIVED, and it is reconciled again after the delay. Over HTTP, both backends."""

from __future__ import annotations

import json
import time

import pytest

from devhost.azurite_emulator import start_azurite
from tests.conftest import make_partner, start_azure_host, start_host
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

STORE = "NYC-001"
DAY, DAY2 = "2026-11-20", "2026-11-21"
DIRECTIONS = {"SALE": 1, "REFUND": -1}
PATIENT_DELAY = 10  # s: the reconciliation delay of the host that must see five batches within one delay


@pytest.fixture
def shop(backend_host):
    return open_shop(backend_host)


@pytest.fixture(scope="module", params=["sqlite", "azure"])
def patient_host(request, tmp_path_factory):
    """A host of the module's own with a 10 s reconciliation delay (the session hosts' is 1 s, which five
    batches on the emulators can outlast on a loaded machine); its own Azurite, so no other host reads
    its queue."""
    tmp = tmp_path_factory.mktemp("patient")
    if request.param == "sqlite":
        host = start_host(tmp, RECONCILE_DELAY_SECONDS=str(PATIENT_DELAY))
        yield host
        host.stop()
        return
    azurite = start_azurite(tmp)
    try:
        host = start_azure_host(
            tmp,
            request.getfixturevalue("cosmos_emulator"),
            azurite.connection_string,
            RECONCILE_DELAY_SECONDS=str(PATIENT_DELAY),
        )
        yield host
        host.stop()
    finally:
        azurite.stop()


def open_shop(host):
    partner = make_partner(host, (STORE,))
    assert partner.put("stores", stores_batch(store(STORE))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    return partner


def post(partner, store_id, business_date, records, batch_seq=1) -> dict:
    response = partner.post("trade-records", trade_batch(store_id, business_date, records, batch_seq))
    assert response.status_code == 202, response.text
    return response.json()


def status(partner, business_date=DAY) -> dict:
    return partner.get(f"daily-close/{STORE}/{business_date}").json()


def wait_for_result(partner, business_date=DAY, timeout=30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = status(partner, business_date)
        if body["status"] in ("MATCHED", "MISMATCHED") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def matched_day(partner, count=12) -> list[dict]:
    """A day of `count` tickets NYC1-T0001..., closed with their totals and reconciled MATCHED."""
    records = [
        trade_record(STORE, DAY, [Line("P-BURGER", 1, 550 + i)], tax=44, trade_record_id=f"NYC1-T{i:04d}")
        for i in range(1, count + 1)
    ]
    post(partner, STORE, DAY, records)
    close = partner.post("daily-close", daily_close(STORE, DAY, totals_of(records, {"01"}, DIRECTIONS)))
    assert close.status_code == 202, close.text
    result = wait_for_result(partner)
    assert result["status"] == "MATCHED", result
    return records


def reconciliations_of(host, partner_id: str, since: int) -> list[dict]:
    return [
        json.loads(line) for line in host.log()[since:].splitlines() if partner_id in line and "reconciliation" in line
    ]


def test_a_version_moving_a_record_out_of_a_matched_day_warns_and_the_day_is_reconciled_again(shop, backend_host):
    records = matched_day(shop)
    moved = trade_record(
        STORE,
        DAY2,
        [Line("P-BURGER", 1, 553)],
        tax=44,
        trade_record_id="NYC1-T0003",
        version=2,
        opened_at="2026-11-21T12:00:00-05:00",
        last_modified_at="2026-11-21T20:00:00Z",
    )
    answer = post(shop, STORE, DAY2, [moved])
    assert answer["warnings"] == [
        {
            "code": "TRADE_RECORD_MOVED",
            "path": "trade_records[0]",
            "field": "business_date",
            "message": "this version moved trade record NYC1-T0003 from NYC-001 2026-11-20 to NYC-001 2026-11-21; a "
            "trade_record_id names one transaction across all stores and dates, and its earlier store-day "
            "NYC-001 2026-11-20 is reconciled again without it",
        }
    ]
    reopened = status(shop)
    assert reopened["status"] == "RECEIVED" and reopened["reconciliation_due_at"], reopened
    result = wait_for_result(shop)
    assert result["status"] == "MISMATCHED", result
    assert (result["expected"]["trade_record_count"], result["actual"]["trade_record_count"]) == (12, 11)
    assert "trade_record_count" in result["differences"]
    assert result["details"]["records_moved_out"] == [
        {"trade_record_id": "NYC1-T0003", "to_store_id": STORE, "to_business_date": DAY2}
    ]
    assert len(records) == 12

    shown = backend_host.hq_in_process("reconcile", "show", shop.partner_id, STORE, DAY)
    assert shown.returncode == 0, shown.stderr
    assert (
        "records moved out by a later version (no longer counted here): NYC1-T0003 to NYC-001 2026-11-21"
        in shown.stdout
    )


def test_late_records_reopen_a_matched_day_once_however_many_batches_arrive(patient_host):
    shop = open_shop(patient_host)
    matched_day(shop, count=3)
    # The reconciliation logs its line after storing the result the partner just read: count from that line on
    # (fresh-ci once counted the MATCHED day's own line, written a moment after its result was visible).
    deadline = time.monotonic() + 10
    while not reconciliations_of(patient_host, shop.partner_id, 0) and time.monotonic() < deadline:
        time.sleep(0.1)
    since = len(patient_host.log())
    posting = time.monotonic()
    for seq in range(2, 7):  # five late batches in a row, within the delay
        late = trade_record(STORE, DAY, [Line("P-COLA", 1, 199)], tax=16, trade_record_id=f"NYC1-L{seq:04d}")
        assert post(shop, STORE, DAY, [late], batch_seq=seq)["warnings"] == []
        assert status(shop)["status"] == "RECEIVED"
    posting = time.monotonic() - posting
    result = wait_for_result(shop)
    assert result["status"] == "MISMATCHED" and result["actual"]["trade_record_count"] == 8, result
    assert result["details"]["records_moved_out"] == []
    # A second message, had a later batch sent one, would come at most `posting` s after the first.
    time.sleep(posting + 3)
    reconciled = reconciliations_of(patient_host, shop.partner_id, since)
    assert len(reconciled) == 1, f"{reconciled} (the batches took {posting:.1f} s, the delay is {PATIENT_DELAY} s)"


def test_a_version_changing_amounts_reopens_the_day_and_a_resend_does_not(shop):
    records = matched_day(shop, count=2)
    changed = {**records[0], "version": 2, "last_modified_at": "2026-11-21T09:00:00Z"}
    batch = trade_batch(STORE, DAY, [changed], 2)
    assert shop.post("trade-records", batch).status_code == 202
    assert status(shop)["status"] == "RECEIVED"
    assert wait_for_result(shop)["status"] == "MATCHED"  # the same amounts: still matched
    assert shop.post("trade-records", batch).status_code == 200  # the retry of a batch reconciled since
    assert status(shop)["status"] == "MATCHED"
    same_again = trade_batch(STORE, DAY, [changed], 3)  # the same version under a new batch_id: ignored
    assert shop.post("trade-records", same_again).status_code == 202
    assert status(shop)["status"] == "MATCHED"
