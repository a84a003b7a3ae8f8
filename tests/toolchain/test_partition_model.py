"""The partition model of ten years (bench/partition_model.py; decisions 0093, 0115): no logical partition of
any container passes 20 GB for the 10,000-store chain, nor for one ten times larger, with retention off or on;
and docs/performance.md shows the model's tables as they are computed."""

from __future__ import annotations

from backends.cosmos.connection import PROJECT_ROOT
from bench import partition_model


def test_no_partition_of_any_container_fills_in_ten_years():
    for scale in (1, 10):
        for row in partition_model.ten_years(scale=scale):
            for part in row["partitions"]:
                if "before" in part["container"]:
                    continue  # the layout of daily-closes that this model is about to replace
                assert part["gb"] < partition_model.LOGICAL_PARTITION_GB * 0.75, (scale, row["retention_days"], part)


def test_the_index_of_a_small_partner_stays_on_its_16_nodes():
    small = partition_model.Chain(stores=20)
    assert partition_model.index_nodes(small, 10 * 365) == 16
    assert partition_model.requests_per_new_record(small, 10 * 365) < 0.07


def test_a_grown_index_writes_16_leaves_at_any_size():
    for days in (30, 365, 3650):
        grown = partition_model.Chain(retention_days=0)
        assert partition_model.index_nodes(grown, days) > 16
        assert partition_model.leaves_touched(grown.batch_records) <= 16


def test_performance_md_shows_the_tables_as_computed():
    text = (PROJECT_ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    for scale in (1, 10):
        assert partition_model.render(partition_model.ten_years(scale=scale)) in text
