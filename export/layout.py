"""Where each file of the export goes: DATASET/partner_id=P/business_date=YYYY-MM-DD/part-STORE.parquet,
Hive-partitioned by partner and business date (DuckDB, pandas/pyarrow, Spark and Fabric read the partitions
as columns), one file per store-day and dataset, so re-exporting a store-day replaces its files.

Partition values and store ids are escaped as Hive escapes path names (%XX for '/', '=', '%', control
characters and the few others Hive lists): readers unescape partition values; the store_id is a column of
every file, so its file name need only be unique and safe."""

from __future__ import annotations

import datetime as dt

CHECKPOINT = "_checkpoint.json"  # a leading "_": Spark, Hive and DuckDB's globs of *.parquet skip it

# The characters Hive's FileUtils.escapePathName escapes (besides those below 0x20 and 0x7F).
_HIVE_SPECIAL = set("\"#%'*/:=?\\{[]^")


def escape(value: str) -> str:
    return "".join(
        f"%{ord(char):02X}" if char in _HIVE_SPECIAL or ord(char) < 0x20 or ord(char) == 0x7F else char
        for char in value
    )


def file_path(dataset: str, partner_id: str, store_id: str, business_date: dt.date) -> str:
    return (
        f"{dataset}/partner_id={escape(partner_id)}/business_date={business_date.isoformat()}/"
        f"part-{escape(store_id)}.parquet"
    )
