"""The benchmark tooling (bench/): its generator makes valid, warning-free batches that reconcile to
MATCHED through the real use cases, and `python -m bench.run --quick` runs end to end. No timing is asserted:
figures belong to `make bench`, not to the tests."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import orjson
import pytest

from bench import catalogue, generate, harness
from bench.accept import STAGES
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("seed", "currency", "records"), [(1, "USD", 500), (2, "USD", 200), (3, "JPY", 300), (4, "JPY", 200)]
)
def test_generated_batches_are_accepted_without_warnings(tmp_path, seed, currency, records):
    service = harness.open_service(tmp_path, currency)
    body = generate.trade_batch_body(records, seed=seed, currency=currency)

    outcome = service.post_trade_records(body)

    assert outcome.http_status == 202, outcome.as_dict()
    assert outcome.record_count == records
    assert outcome.warnings == []


def test_generated_records_are_realistic():
    records = generate.trade_records(500, seed=5)
    sources = {record["source_transaction_type"] for record in records}
    assert sources == set(catalogue.MAPPING)  # sales and some refunds, returns, exchanges, voids
    items = [item for record in records for item in record["items"]]
    assert any(item["product_type"] == "COMBO" for item in items)
    assert any(item["parent_line_no"] is not None for item in items)
    assert any(item["modifiers"] for item in items)
    assert any(item["is_voided"] for item in items)
    assert sum(len(record["payments"]) > 1 for record in records) > 20  # split payments
    assert {payment["payment_method"] for record in records for payment in record["payments"]} >= {
        "CREDIT_CARD",
        "CASH",
        "GIFT_CARD",
        "LOYALTY_POINTS",
        "MOBILE_WALLET",
    }
    assert any(payment["payment_type"] == "REFUND" for record in records for payment in record["payments"])
    assert any(record["tip_amount"] != "0.00" for record in records)
    assert all(len(record["tax_lines"]) == 3 for record in records if record["tax_amount"] != "0.00")
    assert len({record["trade_record_id"] for record in records}) == 500
    assert len(generate.trade_batch_body(500)) > 800_000  # partners send about 1 MB per 500 records


def test_generation_is_deterministic():
    assert generate.trade_batch_body(50, seed=9) == generate.trade_batch_body(50, seed=9)
    assert generate.trade_batch_body(50, seed=9) != generate.trade_batch_body(50, seed=10)
    # record i is the same whatever the batch size
    assert generate.trade_records(10, seed=9) == generate.trade_records(40, seed=9)[:10]


def test_copies_are_new_batches_of_new_transactions(tmp_path):
    service = harness.open_service(tmp_path)
    bodies = generate.batch_bodies(3, 20, tag="T")
    documents = [orjson.loads(body) for body in bodies]
    assert len({document["batch_id"] for document in documents}) == 3
    assert len({record["trade_record_id"] for document in documents for record in document["trade_records"]}) == 60
    assert len({len(body) for body in bodies}) == 1
    for body in bodies:
        outcome = service.post_trade_records(body)
        assert (outcome.http_status, outcome.warnings) == (202, [])


def test_a_body_grown_to_5_mb_stays_under_the_limit_and_is_accepted(tmp_path):
    service = harness.open_service(tmp_path)
    body = generate.sized_batch_body(5_000_000)

    assert 4_750_000 <= len(body) <= 5_000_000 < 5 * 1024 * 1024
    assert len(orjson.loads(body)["trade_records"]) == 500
    outcome = service.post_trade_records(body)
    assert (outcome.http_status, outcome.warnings) == (202, [])


@pytest.mark.parametrize("currency", ["USD", "JPY"])
def test_control_totals_reconcile_to_matched(tmp_path, currency):
    from core.reconcile_reruns import request_for
    from ingest.daily_close import post_daily_close
    from reconcile.service import reconcile

    service = harness.open_service(tmp_path, currency)
    records = generate.trade_records(700, seed=11, currency=currency)
    for seq, start in enumerate(range(0, 700, 500), start=1):
        outcome = service.post_trade_records(
            generate.dumps(generate.trade_batch(records[start : start + 500], batch_seq=seq, seed=11))
        )
        assert (outcome.http_status, outcome.warnings) == (202, [])
    close = generate.daily_close_body(records, batch_count=2, currency=currency, seed=11)
    assert post_daily_close(service.storage, harness.NullQueue(), service.partner, close, 0).http_status == 202

    day = service.storage.get_closed_day("bench", service.store_id, generate.DEFAULT_DATE)
    result = reconcile(service.storage, request_for("bench", day))

    assert result.status == "MATCHED", (result.differences, result.details)
    assert result.details["raw_differences"] == {}


def _generate(*args: str) -> bytes:
    done = subprocess.run([sys.executable, "-m", "bench.generate", *args], cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def test_generator_command_line():
    batch = orjson.loads(_generate("--records", "3", "--seed", "2", "--date", "2026-12-01", "--store", "S-9"))
    assert [record["business_date"] for record in batch["trade_records"]] == ["2026-12-01"] * 3
    assert batch["store_id"] == "S-9" and batch["batch_seq"] == 1

    batches = orjson.loads(_generate("--records", "501"))
    assert [len(batch["trade_records"]) for batch in batches] == [500, 1]
    assert [batch["batch_seq"] for batch in batches] == [1, 2]

    close = orjson.loads(_generate("--kind", "daily-close", "--records", "501"))
    assert close["batch_count"] == 2 and close["trade_record_count"] == 501

    sized = _generate("--target-bytes", "200_000", "--records", "50")
    assert 180_000 <= len(sized) <= 200_001
    for kind in ("stores", "mapping", "products"):
        assert orjson.loads(_generate("--kind", kind))["batch_id"]


_WITHOUT_AZURE = "accept,http,large,reconcile,import,workers,dashboard,export"


def test_bench_quick_runs_end_to_end(tmp_path):
    out = tmp_path / "quick.json"
    done = subprocess.run(
        # azure (on the emulators) has a quick run of its own: tests/toolchain/test_azure_accept.py
        [sys.executable, "-m", "bench.run", "--quick", "--out", str(out), "--only", _WITHOUT_AZURE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    results = orjson.loads(out.read_bytes())
    assert set(results["benchmarks"]) == {
        "accept",
        "http",
        "large",
        "reconcile",
        "import",
        "workers",
        "dashboard",
        "export",
    }
    assert {"cpu_model", "cores", "python"} <= set(results["machine"])
    dt.datetime.fromisoformat(results["date"])
    accept = results["benchmarks"]["accept"]
    assert accept["warnings"] == 0 and accept["ratio"] > 0 and accept["resend"]["fraction_of_first_send"] > 0
    # every stage of the use case was called and timed (bench/accept.py STAGES)
    assert list(accept["stages"]) == [label for label, _, _ in STAGES]
    assert all(stage["median_ms"] > 0 for stage in accept["stages"].values())
    assert "stage: prologue: I-JSON: repeated names, by counting colons" in done.stdout
    assert "stage: store (save_trade_records, in save)" in done.stdout
    assert results["benchmarks"]["http"]["ratio_clients_1"]["p99"] > 0
    assert all(size["ratio"] > 0 for size in results["benchmarks"]["reconcile"]["sizes"].values())
    assert results["benchmarks"]["import"]["function_app_import_ms"]["median_ms"] > 0
    runs = results["benchmarks"]["workers"]["runs"]
    assert len(runs) == 6 and all(run["records_per_s"] > 0 and run["n"] > 0 for run in runs.values())
    assert "worker processes, 4 clients" in done.stdout

    dashboard = results["benchmarks"]["dashboard"]
    assert dashboard["fates"]["MATCHED"] > 0 and dashboard["fates"]["MISMATCHED"] > 0
    # the benchmark checks that the overview shows every store-day as a cell; both pages outweigh their floor
    assert all(page["ratio"] > 0 and page["page_bytes"] > page["floor_bytes"] for page in dashboard["pages"].values())
    assert "accept" in done.stdout and "reconcile" in done.stdout  # the table

    # the store-day against the writer alone and against the least export of its stored documents (decision 0131)
    day = results["benchmarks"]["export"]["store_day"]
    assert day["rows"] > day["records"] and day["ratio"] > 0
    assert day["stored_form_floor"]["median_ms"] > day["floor"]["median_ms"] > 0
    assert day["ratio_to_stored_form_floor"] > 0 and day["stored_form_floor_target"] == 1.5
    assert "against the least export of its stored JSON documents" in done.stdout

    shown = subprocess.run(
        [sys.executable, "-m", "bench.run", "--show", str(out), "--markdown"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    table = [line for line in shown.stdout.splitlines() if line.startswith("| ")]
    assert table[0] == "| benchmark | service | floor | ratio | target | met |"
    assert len(table) == 2 + len(results["table"])
    assert any(line.startswith("| · stage: prologue: I-JSON: repeated names") for line in table)  # a detail row


def test_summary_and_ratio_of_samples():
    from bench.measure import ratio, summary

    figures = summary([3.0, 1.0, 2.0, 10.0])
    assert (figures["median_ms"], figures["p99_ms"], figures["min_ms"], figures["max_ms"], figures["n"]) == (
        2.5,
        10.0,
        1.0,
        10.0,
        4,
    )
    assert figures["samples_ms"] == [3.0, 1.0, 2.0, 10.0]  # in the order measured
    assert ratio(3.0, 2.0) == 1.5 and ratio(3.0, 0) is None


def test_the_text_table_aligns_its_columns():
    from bench.report import render_table

    rows = [
        {
            "benchmark": "accept",
            "service": "10 ms",
            "floor": "4.0 ms",
            "ratio": "2.50x",
            "target": "<= 2.5x",
            "met": True,
        },
        {
            "benchmark": "  stage: parse",
            "service": "1.0 ms",
            "floor": "4.0 ms",
            "ratio": "0.25x",
            "target": "",
            "met": None,
        },
    ]

    lines = render_table(rows).splitlines()

    assert lines[0].split() == ["benchmark", "service", "floor", "ratio", "target", "met"]
    assert lines[2].split() == ["accept", "10", "ms", "4.0", "ms", "2.50x", "<=", "2.5x", "yes"]
    assert lines[3].startswith("  stage: parse")  # a detail row keeps its indent
    assert lines[2].index("yes") == lines[0].index("met") and lines[2].index("2.50x") == lines[0].index("ratio")
