"""The capacity model with TRADE_RECORD_RETENTION_DAYS (decision 0086): storage and
the throughput it bills at least are bounded by the store-days held, instead of growing month after month."""

from __future__ import annotations

import dataclasses

import pytest

from bench.capacity_model import GB, Chain, Costs, Prices, plan
from core.retention import EXPIRY_GRACE_DAYS

# The published run's figures that storage depends on (docs/performance.md); the rest does not matter here.
COSTS = Costs(
    **{field.name: 1.0 for field in dataclasses.fields(Costs)}
    | {"cosmos_bytes_per_record": 3_629.0, "close_bytes": 1_518.0, "queue_messages_per_close": 1}
)


def month(retention_days: int) -> dict:
    return plan(COSTS, Chain(retention_days=retention_days), Prices())["month"]


def test_without_retention_a_year_holds_every_record():
    kept = month(0)
    assert kept["store-days of records held after 12 months"] == 360
    assert kept["after 12 months, stored (GB)"] == pytest.approx(12 * kept["storage growth (GB)"])


@pytest.mark.parametrize("days", [7, 30, 90])
def test_with_retention_storage_and_its_throughput_floor_stop_at_the_days_held(days):
    chain = Chain()
    held = days + 1 + EXPIRY_GRACE_DAYS
    records_gb = chain.stores * chain.records_per_store_day * held * COSTS.cosmos_bytes_per_record / GB
    closes_gb = 12 * chain.stores * chain.days_per_month * COSTS.close_bytes / GB  # closes stay
    bounded = month(days)
    assert bounded["store-days of records held after 12 months"] == held
    assert bounded["after 12 months, stored (GB)"] == pytest.approx(records_gb + closes_gb)
    assert bounded["after 12 months, throughput billed at least (RU/s)"] == pytest.approx(records_gb + closes_gb)
    assert bounded["after 12 months, stored (GB)"] < month(0)["after 12 months, stored (GB)"] / 3
    assert bounded["physical partitions after 12 months"] < month(0)["physical partitions after 12 months"]
    assert month(days + 30)["after 12 months, stored (GB)"] > bounded["after 12 months, stored (GB)"]  # N decides
