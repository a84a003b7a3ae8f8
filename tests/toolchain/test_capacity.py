"""The capacity model (bench/capacity.py): `python -m bench.capacity --quick` runs end to end on SQLite and
the Cosmos DB emulator and prints its table; the requests it counts show the record index's transactional
batches (no request per record); the cost model gives the published figures. No time is asserted."""

from __future__ import annotations

import math
import subprocess
import sys

import orjson
import pytest

from backends.cosmos.keys import INDEX_BUCKETS
from bench import request_charges
from bench.capacity_model import Chain, infra_parameter
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> tuple[str, dict]:
    figures = tmp_path_factory.mktemp("capacity") / "capacity.json"
    run = subprocess.run(
        [sys.executable, "-m", "bench.capacity", "--quick", "--json", str(figures)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout, orjson.loads(figures.read_bytes())


def test_the_quick_run_prints_the_busiest_hour_the_month_and_the_parts_that_saturate(quick_run):
    output, figures = quick_run
    for heading in ("PER-REQUEST COSTS", "BUSIEST HOUR", "MONTH", "COST PER MONTH, USD", "what to change"):
        assert heading in output
    parts = figures["plan"]["parts_by_utilisation"]
    assert [part["utilisation"] for part in parts] == sorted((part["utilisation"] for part in parts), reverse=True)
    assert figures["plan"]["busiest_hour"]["stores closing"] == 4_000  # 80 % of 10,000 within two hours


def per_record_reads(by_request: dict) -> bool:
    """Point reads of trade-records beyond the partner's index layout item (decision 0092) and the store-day's
    sums item (its batch_seqs: decision 0116), each read once a batch at most."""
    return sum(count for name, count in by_request.items() if name.startswith("trade-records read_item")) > 2


def test_records_are_written_in_transactional_batches_without_reading_one_by_one(quick_run):
    _, figures = quick_run
    cosmos = figures["measured"]["cosmos"]
    records = cosmos["batch_records"]
    # entries per index bucket, records per 99 with their day's sums item, the batch entry with it too
    most = INDEX_BUCKETS + math.ceil(records / 99) + 1
    per_record = ("trade-records create_item", "trade-records replace_item")  # reads: per_record_reads
    new = cosmos["new"]["by_request"]
    assert 2 <= new["trade-records execute_item_batch 200"] <= most
    assert not any(name.startswith(per_record) for name in new) and not per_record_reads(new)
    # The same records under a new batch_id: the entries' batches meet the stored entries and are refused; the
    # entries are then read in one query, and nothing is written.
    resend = cosmos["resend_new_batch_id"]["by_request"]
    assert resend["trade-records execute_item_batch 409"] >= 1
    assert not any(name.startswith(per_record) for name in resend) and not per_record_reads(resend)
    # A next version: entries read in one query, then replaced in batches, as its records.
    later = cosmos["next_version_same_day"]["by_request"]
    assert 2 <= later["trade-records execute_item_batch 200"] <= most
    assert not any(name.startswith(per_record) for name in later) and not per_record_reads(later)


def test_the_cost_model_gives_the_published_figures():
    assert request_charges.read_ru(1024) == 1.0
    assert request_charges.read_ru(300) == 1.0  # under 1 KB, as 1 KB
    assert request_charges.write_ru(2048, 0) == 6.29
    assert request_charges.write_ru(2048, 2) == pytest.approx(6.69)
    assert request_charges.write_ru(3 * 1024, 0) == pytest.approx((6.29 + 6.67) / 2)
    assert (
        request_charges.indexed_terms(["/pk/?", "/type/?", "/payment_keys/[]/?"], {"pk": "a", "payment_keys": [1, 2]})
        == 3
    )


def test_the_model_reads_the_deployment_as_infra_sets_it():
    chain = Chain()
    assert chain.maximum_instances == infra_parameter("maximumInstanceCount")
    assert chain.http_per_instance_concurrency == infra_parameter("httpPerInstanceConcurrency", "main.parameters.json")
