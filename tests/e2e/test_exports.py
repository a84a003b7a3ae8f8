"""`hq export` end to end, on both backends: store-days sent over HTTP and reconciled by the queue worker are
exported as Parquet into a folder, read back with DuckDB and with pyarrow, and their rows add up to each
day's reconciliation `actual` exactly; running the export again writes the same bytes."""

from __future__ import annotations

import datetime as dt
import hashlib
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from core.clock import epoch_micros
from tests.conftest import make_partner
from tests.e2e.test_business_day import DAY, DIRECTIONS, close_and_wait, push
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, totals_of, trade_record

NEXT_DAY = "2026-11-21"
# A store id in Japanese with a space, and one that looks like a number (its zeros must stay).
TOKYO, NUMERIC = "店舗 新宿", "0042"
STORES = ("S1", TOKYO, NUMERIC)

# Per store-day, the sums the reconciliation's `actual` holds, from the exported rows alone.
DUCKDB_SUMS = """
WITH records AS (
    SELECT business_date, store_id, COUNT(*) AS trade_record_count,
        SUM(item_row_count) AS item_rows_said, SUM(payment_row_count) AS payment_rows_said,
        COALESCE(SUM(net_sales_amount) FILTER (WHERE is_revenue), 0) AS net_sales_amount,
        SUM(tax_amount) AS tax_amount, SUM(tip_amount) AS tip_amount
    FROM read_parquet('{out}/trade_records/**/*.parquet', hive_partitioning = true)
    WHERE partner_id = $partner GROUP BY ALL),
items AS (
    SELECT business_date, store_id, COUNT(*) AS item_row_count
    FROM read_parquet('{out}/item_lines/**/*.parquet', hive_partitioning = true)
    WHERE partner_id = $partner GROUP BY ALL),
payments AS (
    SELECT business_date, store_id, COUNT(*) AS payment_row_count,
        COALESCE(SUM(amount * direction) FILTER (WHERE direction IS NOT NULL), 0) AS payment_total_amount
    FROM read_parquet('{out}/payments/**/*.parquet', hive_partitioning = true)
    WHERE partner_id = $partner GROUP BY ALL)
SELECT r.business_date, r.store_id, trade_record_count, item_row_count, payment_row_count, net_sales_amount,
    tax_amount, tip_amount, payment_total_amount, item_rows_said, payment_rows_said
FROM records r JOIN items USING (business_date, store_id) JOIN payments USING (business_date, store_id)
ORDER BY 1, 2
"""


@pytest.fixture
def shop(backend_host):
    partner = make_partner(backend_host, STORES)
    stores = [store("S1"), store(TOKYO, currency="JPY", country_code="JP", time_zone="Asia/Tokyo", locale="ja-JP")]
    assert partner.put("stores", stores_batch(*stores, store(NUMERIC))).status_code == 202
    mapping = mapping_batch(("01", "SALE"), ("02", "REFUND"), ("0003", "SALE"))
    assert partner.put("mappings/transaction-types", mapping).status_code == 202
    return partner


def send_days(shop) -> dict[tuple[str, str], dict]:
    """Four store-days, reconciled: their results by (business_date, store_id)."""
    results = {}
    s1 = [
        trade_record("S1", DAY, [Line("P-抹茶ラテ", 2, 550), Line("P-COLA", 1, 199)], tax=130, tip=100),
        trade_record("S1", DAY, [Line("P-FRIES", -1, 299)], source_type="02", tax=-24),
        trade_record(
            "S1",
            DAY,
            [Line("P-BURGER", 1, 1000)],
            [Pay(700), Pay(300, "DEPOSIT_APPLIED", "OTHER")],
            source_type="0003",
            tax=80,
            order_source_detail="",  # read as absent, as an omitted field
            member_id="",
            opened_at="2026-11-20T23:30:00.123456+09:00",
        ),
    ]
    push(shop, "S1", s1)
    results[(DAY, "S1")] = close_and_wait(shop, "S1", totals_of(s1, {"01", "02", "0003"}, DIRECTIONS))
    tokyo = [trade_record(TOKYO, DAY, [Line("P-おにぎり", 3, 180)], currency="JPY", exponent=0, tax=54)]
    push(shop, TOKYO, tokyo)
    results[(DAY, TOKYO)] = close_and_wait(
        shop, TOKYO, totals_of(tokyo, {"01"}, DIRECTIONS, exponent=0), currency="JPY"
    )
    first = trade_record(NUMERIC, NEXT_DAY, [Line("P-BURGER", 1, 550)], tax=44, trade_record_id="000123")
    corrected = {**trade_record(NUMERIC, NEXT_DAY, [Line("P-BURGER", 2, 550)], tax=88, version=2)}
    corrected.update(trade_record_id="000123", last_modified_at="2026-11-21T21:00:00Z")
    push(shop, NUMERIC, [first], business_date=NEXT_DAY)
    push(shop, NUMERIC, [corrected], batch_seq=2, business_date=NEXT_DAY)
    results[(NEXT_DAY, NUMERIC)] = close_and_wait(
        shop, NUMERIC, totals_of([corrected], {"01"}, DIRECTIONS), business_date=NEXT_DAY, batch_count=2
    )
    sent = trade_record("S1", NEXT_DAY, [Line("P-COLA", 1, 199)], tax=16)
    missing = trade_record("S1", NEXT_DAY, [Line("P-COLA", 2, 199)], tax=32)
    push(shop, "S1", [sent], business_date=NEXT_DAY)
    results[(NEXT_DAY, "S1")] = close_and_wait(
        shop, "S1", totals_of([sent, missing], {"01"}, DIRECTIONS), business_date=NEXT_DAY
    )
    statuses = {key: result["status"] for key, result in results.items()}
    assert statuses == {
        (DAY, "S1"): "MATCHED",
        (DAY, TOKYO): "MATCHED",
        (NEXT_DAY, NUMERIC): "MATCHED",
        (NEXT_DAY, "S1"): "MISMATCHED",
    }
    return results


def ok(result) -> str:
    """The command's summary (stdout); progress goes to stderr, starting with what it exports where."""
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("Exporting "), result.stderr
    return result.stdout


def file_digests(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_the_exported_rows_of_each_store_day_add_up_to_its_reconciliation(shop, tmp_path):
    results = send_days(shop)
    out = tmp_path / "export"
    exported = ok(shop.host.hq("export", shop.partner_id, "--from", DAY, "--to", NEXT_DAY, "--out", str(out)))
    assert f"Exported 4 reconciled store-days of {shop.partner_id}" in exported
    assert "16 files" in exported

    sums = duckdb.sql(DUCKDB_SUMS.format(out=out), params={"partner": shop.partner_id}).fetchall()
    assert [(row[0].isoformat(), row[1]) for row in sums] == sorted(results)
    for row in sums:
        actual = results[(row[0].isoformat(), row[1])]["actual"]
        counts = {"trade_record_count": row[2], "item_row_count": row[3], "payment_row_count": row[4]}
        assert counts == {name: actual[name] for name in counts}
        assert (row[9], row[10]) == (row[3], row[4])  # each record's own counts agree with its rows
        for name, value in zip(
            ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount"), row[5:9], strict=True
        ):
            assert isinstance(value, Decimal) and value == Decimal(actual[name]), (row[:2], name, value)

    closes = duckdb.sql(
        f"SELECT business_date, store_id, status, epoch_us(checked_at), typeof(checked_at), actual_net_sales_amount, "
        "differences, currency "
        f"FROM read_parquet('{out}/daily_closes/**/*.parquet', hive_partitioning = true) ORDER BY 1, 2"
    ).fetchall()
    for business_date, store_id, status, checked_us, checked_type, net_sales, differences, currency in closes:
        result = results[(business_date.isoformat(), store_id)]
        assert status == result["status"] and differences == result["differences"]
        assert checked_us == epoch_micros(dt.datetime.fromisoformat(result["checked_at"]))
        assert checked_type == "TIMESTAMP WITH TIME ZONE"
        assert net_sales == Decimal(result["actual"]["net_sales_amount"])
        assert currency == ("JPY" if store_id == TOKYO else "USD")

    again = ok(shop.host.hq("export", shop.partner_id, "--from", DAY, "--to", NEXT_DAY, "--out", str(out)))
    assert "16 files" in again
    before = file_digests(out)
    ok(shop.host.hq("export", shop.partner_id, "--from", DAY, "--to", NEXT_DAY, "--out", str(out)))
    assert file_digests(out) == before and len(before) == 16


def test_pyarrow_reads_exact_decimals_utc_times_and_the_partners_text(shop, tmp_path):
    send_days(shop)
    out = tmp_path / "export"
    ok(shop.host.hq_in_process("export", shop.partner_id, "--from", DAY, "--to", DAY, "--out", str(out)))
    records = ds.dataset(out / "trade_records", partitioning="hive").to_table()
    assert records.schema.field("total_amount").type == pa.decimal128(38, 4)
    assert records.schema.field("opened_at").type == pa.timestamp("us", tz="UTC")
    rows = {row["source_transaction_type"]: row for row in records.to_pylist() if row["store_id"] == "S1"}
    assert set(rows) == {"01", "02", "0003"}  # "0003" kept as text, its zeros too
    deposit = rows["0003"]
    assert deposit["opened_at"] == dt.datetime(2026, 11, 20, 14, 30, 0, 123456, tzinfo=dt.UTC)
    assert (deposit["order_source_detail"], deposit["member_id"]) == (None, None)  # "" is stored as absent
    assert deposit["standard_transaction_type"] == "SALE" and deposit["is_revenue"] is True
    assert rows["02"]["standard_transaction_type"] == "REFUND" and rows["02"]["is_revenue"] is True  # negative sales
    assert rows["01"]["total_amount"] == Decimal("15.29") and rows["01"]["net_sales_amount"] == Decimal("12.99")
    (tokyo,) = [row for row in records.to_pylist() if row["store_id"] == TOKYO]
    assert (tokyo["total_amount"], tokyo["currency"], tokyo["currency_exponent"]) == (Decimal("594"), "JPY", 0)
    assert {row["partner_id"] for row in records.to_pylist()} == {shop.partner_id}

    lines = ds.dataset(out / "item_lines", partitioning="hive").to_table().to_pylist()
    assert {line["product_id"] for line in lines} >= {"P-抹茶ラテ", "P-おにぎり"}
    payments = ds.dataset(out / "payments", partitioning="hive").to_table().to_pylist()
    applied = [payment for payment in payments if payment["payment_type"] == "DEPOSIT_APPLIED"]
    assert [(payment["amount"], payment["direction"]) for payment in applied] == [(Decimal("3.00"), 0)]
    assert sorted(path.name for path in (out / "trade_records").rglob("*.parquet")) == [
        "part-S1.parquet",
        f"part-{TOKYO}.parquet",
    ]


def checked_at(result: dict) -> dt.datetime:
    return dt.datetime.fromisoformat(result["checked_at"])


class OnePartnersDays:
    """The host's storage, its days checked limited to one partner: the session's host holds other tests'
    partners, whose days the timer would export too."""

    def __init__(self, storage, partner_id: str) -> None:
        self._storage, self._partner_id = storage, partner_id

    def __getattr__(self, name: str):
        return getattr(self._storage, name)

    def days_checked(self, after, through, limit=None):
        mine = [entry for entry in self._storage.days_checked(after, through) if entry[0] == self._partner_id]
        return mine[:limit]


def test_the_timer_catches_up_a_missed_run_and_exports_a_day_checked_again(host, tmp_path):
    """The timer's use case on the host's storage, its clock given: each run exports the days checked since
    the checkpoint (SETTLE before its time) and moves the checkpoint; a run that never happened is caught up
    by the next; a day reconciled again after its export is exported again over its files."""
    from backends.export_destinations import LocalFolder
    from export.checkpoint import SETTLE, export_newly_checked, exported_through

    shop = make_partner(host, ("S1", "S2"))
    assert shop.put("stores", stores_batch(store("S1"), store("S2"))).status_code == 202
    assert shop.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    destination, storage = LocalFolder(tmp_path / "exports"), OnePartnersDays(host.storage(), shop.partner_id)

    def day(store_id: str, business_date: str, *records: dict, batch_seq: int = 1) -> dict:
        push(shop, store_id, list(records), batch_seq=batch_seq, business_date=business_date)
        totals = totals_of(list(records), {"01"}, DIRECTIONS)
        return close_and_wait(shop, store_id, totals, business_date=business_date, batch_count=batch_seq)

    first = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)
    a = day("S1", DAY, first)
    exported, through = export_newly_checked(storage, destination, now=checked_at(a) + SETTLE - dt.timedelta(seconds=1))
    assert exported.days == 0  # checked too recently: a result may still be being saved
    assert exported_through(destination) == through == checked_at(a) - dt.timedelta(seconds=1)
    run_1 = checked_at(a) + SETTLE + dt.timedelta(seconds=1)
    exported, through = export_newly_checked(storage, destination, now=run_1)
    assert exported.days == 1 and exported_through(destination) == through == checked_at(a) + dt.timedelta(seconds=1)

    b = day("S2", DAY, trade_record("S2", DAY, [Line("P-COLA", 2, 199)], tax=32))
    c = day("S1", NEXT_DAY, trade_record("S1", NEXT_DAY, [Line("P-COLA", 1, 199)], tax=16))
    # The runs between are lost; the next one exports both days, not the one exported already.
    paths = sorted(path.relative_to(destination.root) for path in destination.root.rglob("*.parquet"))
    exported, through = export_newly_checked(storage, destination, now=checked_at(c) + SETTLE)
    assert exported.days == 2 and exported.files == 8 and through == checked_at(c)
    assert len(paths) == 4 and len(list(destination.root.rglob("*.parquet"))) == 12
    assert export_newly_checked(storage, destination, now=checked_at(c) + SETTLE)[0].days == 0  # nothing new
    assert checked_at(b) <= checked_at(c)

    corrected = {**first, "version": 2, "last_modified_at": "2026-11-21T09:00:00Z"}
    corrected["items"] = [{**first["items"][0], "product_name": "Burger ダブル"}]
    a_again = day("S1", DAY, corrected, batch_seq=2)
    assert a_again["status"] == "MATCHED" and checked_at(a_again) > checked_at(c)
    exported, _ = export_newly_checked(storage, destination, now=checked_at(a_again) + SETTLE)
    assert exported.days == 1
    lines = ds.dataset(destination.root / "item_lines", partitioning="hive").to_table().to_pylist()
    assert [line["product_name"] for line in lines if line["trade_record_id"] == first["trade_record_id"]] == [
        "Burger ダブル"
    ]


@pytest.fixture(scope="module")
def azurite_blob(tmp_path_factory):
    from devhost.azurite_emulator import start_azurite_blob

    emulator = start_azurite_blob(tmp_path_factory.mktemp("azurite-blob"))
    yield emulator
    emulator.stop()


def test_an_export_to_blob_storage_writes_the_same_files_as_to_a_folder(host, azurite_blob, tmp_path):
    """Into a container of Azurite's Blob service, signed in with the emulator's account key (Entra ID, as
    in Azure, cannot be tested here): the blobs are the folder's files, byte for byte, under the prefix."""
    from azure.storage.blob import ContainerClient

    from core.settings import DEVELOPMENT_ACCOUNT, DEVELOPMENT_KEY

    shop = make_partner(host, STORES)
    stores = [store("S1"), store(TOKYO, currency="JPY", country_code="JP", time_zone="Asia/Tokyo", locale="ja-JP")]
    assert shop.put("stores", stores_batch(*stores)).status_code == 202
    assert shop.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    for store_id, currency, exponent in (("S1", "USD", 2), (TOKYO, "JPY", 0)):
        record = trade_record(store_id, DAY, [Line("P-抹茶", 2, 550)], currency=currency, exponent=exponent, tax=88)
        push(shop, store_id, [record])
        totals = totals_of([record], {"01"}, DIRECTIONS, exponent=exponent)
        assert close_and_wait(shop, store_id, totals, currency=currency)["status"] == "MATCHED"

    account_url = f"http://127.0.0.1:{azurite_blob.port}/{DEVELOPMENT_ACCOUNT}"
    connection = f"AccountName={DEVELOPMENT_ACCOUNT};AccountKey={DEVELOPMENT_KEY};BlobEndpoint={account_url};"
    folder = tmp_path / "folder"
    ok(shop.host.hq_in_process("export", shop.partner_id, "--from", DAY, "--to", DAY, "--out", str(folder)))
    shop.host.env["EXPORT_STORAGE_CONNECTION"] = connection
    try:
        for _ in range(2):  # the second run overwrites every blob with the same bytes
            summary = ok(
                shop.host.hq(
                    "export", shop.partner_id, "--from", DAY, "--to", DAY, "--out", f"{account_url}/exports/hq"
                )
            )
            assert "2 reconciled store-days" in summary and "8 files" in summary
    finally:
        del shop.host.env["EXPORT_STORAGE_CONNECTION"]

    container = ContainerClient(
        account_url, "exports", credential={"account_name": DEVELOPMENT_ACCOUNT, "account_key": DEVELOPMENT_KEY}
    )
    blobs = {
        blob.name.removeprefix("hq/"): container.download_blob(blob.name).readall()
        for blob in container.list_blobs(name_starts_with="hq/")
    }
    files = {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*.parquet")}
    assert blobs == files and len(files) == 8
    assert f"trade_records/partner_id={shop.partner_id}/business_date={DAY}/part-{TOKYO}.parquet" in blobs
