"""Upgrading a Cosmos DB database, on the emulators with the real `hq` command line: closes written in
partners' partitions of `daily-closes` (the layout before decision 0093) are found, moved when touched and
by `hq cosmos relayout` (idempotent, with progress); and `hq retention backfill` (decision 0094) gives the
items written while retention was off the ttl they would have had, and continues where it stopped."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from backends.cosmos.close_moves import DONE_ID, DONE_KEY
from backends.cosmos.items import query, read_or_none
from backends.cosmos.keys import close_key, partner_key
from backends.cosmos.storage import CosmosStorage
from core.clock import utc_now
from tests.conftest import ROOT, make_partner
from tests.e2e.test_business_day import DIRECTIONS, open_store, wait_for_result
from tests.payloads import store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


@pytest.fixture
def cosmos(azure_host, cosmos_emulator):
    opened = CosmosStorage(cosmos_emulator.endpoint, azure_host.env["COSMOS_DATABASE"], key=cosmos_emulator.key)
    yield opened
    opened.close()


def hq(host, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hq", *args],
        cwd=ROOT,
        env={**host.env, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def closes_of(cosmos, partner_id: str) -> list[dict]:
    return query(
        cosmos._containers.closes,
        "SELECT * FROM c WHERE c.partner_id = @partner AND c.type = 'close'",
        partner=partner_id,
    )


def test_closes_of_the_earlier_layout_are_read_moved_and_relaid_out_by_hq(azure_host, cosmos, cosmos_emulator):
    partner = make_partner(azure_host, ("S1", "S2", "S3"))
    open_store(partner)
    for store_id in ("S2", "S3"):
        assert partner.put("stores", stores_batch(store(store_id))).status_code == 202
    day = "2026-11-20"
    for store_id in ("S1", "S2", "S3"):
        sent = [trade_record(store_id, day, [Line("P-BURGER", 1, 550)], tax=44)]
        assert partner.post("trade-records", trade_batch(store_id, day, sent)).status_code == 202
        assert (
            partner.post("daily-close", daily_close(store_id, day, totals_of(sent, {"01"}, DIRECTIONS))).status_code
            == 202
        )
        assert wait_for_result(partner, store_id, day, 30)["status"] == "MATCHED"
    closes = cosmos._containers.closes
    if read_or_none(closes, DONE_ID, DONE_KEY) is not None:  # relaid out by an earlier run of this module
        closes.delete_item(DONE_ID, partition_key=DONE_KEY)
    for item in closes_of(cosmos, partner.partner_id):  # as written before decision 0093
        assert item["pk"] == close_key(partner.partner_id, item["store_id"])
        old = {name: value for name, value in item.items() if not name.startswith("_")}
        closes.create_item({**old, "pk": partner_key(partner.partner_id)})
        closes.delete_item(item["id"], partition_key=item["pk"])

    fresh = CosmosStorage(cosmos_emulator.endpoint, azure_host.env["COSMOS_DATABASE"], key=cosmos_emulator.key)
    try:
        assert [day.store_id for day in fresh.closed_days(partner.partner_id)] == ["S1", "S2", "S3"]
        assert fresh.get_closed_day(partner.partner_id, "S1", dt.date(2026, 11, 20)).status == "MATCHED"
    finally:
        fresh.close()
    where = {item["store_id"]: item["pk"] for item in closes_of(cosmos, partner.partner_id)}
    assert where == {
        "S1": close_key(partner.partner_id, "S1"),  # moved when read
        "S2": partner_key(partner.partner_id),
        "S3": partner_key(partner.partner_id),
    }

    moved = hq(azure_host, "cosmos", "relayout")
    assert moved.returncode == 0, moved.stderr
    assert "2 closes moved, none left" in moved.stdout and "closes found in the old place" in moved.stderr
    assert {item["pk"] for item in closes_of(cosmos, partner.partner_id)} == {
        close_key(partner.partner_id, store_id) for store_id in ("S1", "S2", "S3")
    }
    again = hq(azure_host, "cosmos", "relayout")
    assert "0 closes moved, none left" in again.stdout
    assert read_or_none(closes, DONE_ID, DONE_KEY) is not None
    assert partner.get(f"daily-close/S3/{day}").json()["status"] == "MATCHED"


def test_retention_backfill_gives_items_written_before_retention_their_ttl(azure_host, cosmos):
    partner = make_partner(azure_host)
    open_store(partner)
    day = (utc_now().date() - dt.timedelta(days=3)).isoformat()
    sent = [trade_record("S1", day, [Line("P-COLA", 2, 199)], tax=30, opened_at=f"{day}T12:00:00Z") for _ in range(3)]
    assert partner.post("trade-records", trade_batch("S1", day, sent)).status_code == 202
    trades = cosmos._containers.trade_records

    def without_ttl() -> list[dict]:
        return query(
            trades,
            "SELECT c.id, c.pk FROM c WHERE (c.partner_id = @partner OR STARTSWITH(c.pk, @day)) "
            "AND NOT IS_DEFINED(c.ttl) AND c.id != 'head' AND c.id != 'layout'",
            partner=partner.partner_id,
            day=f"d|{partner.partner_id}|",
        )

    assert len(without_ttl()) == 3 + 3 + 1 + 1  # records, index entries, the batch entry, the day's sums item
    off = hq(azure_host, "retention", "backfill")
    assert "Retention is off" in off.stdout and len(without_ttl()) == 8
    done = hq(azure_host, "retention", "backfill", TRADE_RECORD_RETENTION_DAYS="30")
    assert done.returncode == 0, done.stderr
    assert without_ttl() == [] and "ttl backfilled" in done.stdout
    markers = query(
        cosmos._containers.batches,
        "SELECT c.ttl FROM c WHERE c.partner_id = @partner AND c.kind = 'trade-records'",
        partner=partner.partner_id,
    )
    assert markers and all(marker.get("ttl", 0) > 20 * 86_400 for marker in markers)
    again = hq(azure_host, "retention", "backfill", TRADE_RECORD_RETENTION_DAYS="30")
    assert "0 store-days (0 items), 0 index entries, 0 batch markers" in again.stdout
