"""A folder of a business day's data, as the command line reads it (the layout of the service's examples/day).

    stores.json                 optional: a PUT /stores body (or a list of them)
    products.json               optional: a PUT /products body (or a list)
    mapping.json                optional: a PUT /mappings/transaction-types body (or a list)
    trade-records-*.json        POST /trade-records bodies (one, or a list), or plain lists of trade records
    daily-close-*.json          POST /daily-close bodies (one, or a list): the POS's control totals per store-day

Trade records are grouped by their own store_id and business_date and re-batched by push_day: batch_ids,
batch_seqs and batch_counts in the files are not used (the client's are derived from the content). Master data
keeps a batch_id the file gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MASTER_FILES = (("stores.json", "stores"), ("products.json", "products"), ("mapping.json", "mappings"))


class DayFolderError(ValueError):
    """The folder cannot be read as a business day (a file missing, malformed, or a day without its close)."""


@dataclass
class StoreDay:
    store_id: str
    business_date: str
    close: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class DayFolder:
    masters: list[tuple[str, dict[str, Any]]]  # ("stores" | "products" | "mappings", body), in sending order
    days: list[StoreDay]

    @property
    def record_count(self) -> int:
        return sum(len(day.records) for day in self.days)


def _bodies(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DayFolderError(f"{path}: {error}") from None
    return data if isinstance(data, list) else [data]


def _records_of(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for item in _bodies(path):
        if not isinstance(item, dict):
            raise DayFolderError(f"{path}: expected request bodies or trade records, found {type(item).__name__}")
        records += item.get("trade_records", [item])
    return records


def read_day_folder(folder: Path) -> DayFolder:
    if not folder.is_dir():
        raise DayFolderError(f"{folder} is not a folder")
    masters = []
    for name, member in MASTER_FILES:
        for body in _bodies(folder / name) if (folder / name).exists() else []:
            if not isinstance(body, dict) or not isinstance(body.get(member), list):
                raise DayFolderError(f"{folder / name}: expected a request body with a list {member!r}")
            masters.append((member, body))
    days: dict[tuple[str, str], StoreDay] = {}
    for path in sorted(folder.glob("daily-close-*.json")):
        for close in _bodies(path):
            try:
                key = (str(close["store_id"]), str(close["business_date"]))
            except (KeyError, TypeError):
                raise DayFolderError(f"{path}: a daily close needs store_id and business_date") from None
            if key in days:
                raise DayFolderError(f"{path}: a second daily close of {key[0]} {key[1]}")
            days[key] = StoreDay(*key, close=close)
    for path in sorted(folder.glob("trade-records-*.json")):
        for record in _records_of(path):
            key = (str(record.get("store_id")), str(record.get("business_date")))
            if key not in days:
                raise DayFolderError(f"{path}: trade records of {key[0]} {key[1]}, which has no daily-close-*.json")
            days[key].records.append(record)
    if not days:
        raise DayFolderError(f"no daily-close-*.json in {folder}")
    return DayFolder(masters, [days[key] for key in sorted(days)])
