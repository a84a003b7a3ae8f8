"""Typed results of the service's answers: what a write answered, a day's reconciliation, the code lists.

Each is built from the answer's JSON by `from_json`; members the service adds later are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FINAL_STATUSES = frozenset({"MATCHED", "MISMATCHED"})


@dataclass(frozen=True)
class BatchWarning:
    """The records are stored, but something looks wrong (the service's docs/partner-guide.md, "Warnings"); `message` is for people."""

    code: str
    path: str
    message: str
    field: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchWarning:
        return cls(str(data["code"]), str(data["path"]), str(data["message"]), data.get("field"))


@dataclass(frozen=True)
class BatchResult:
    """What a write answered: ACCEPTED (202) or ALREADY_RECEIVED (200, the batch_id was received before)."""

    batch_id: str
    status: str
    record_count: int
    warnings: tuple[BatchWarning, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchResult:
        warnings = tuple(BatchWarning.from_json(item) for item in data.get("warnings") or ())
        return cls(str(data["batch_id"]), str(data["status"]), int(data["record_count"]), warnings)


@dataclass(frozen=True)
class ControlTotals:
    """A store-day's totals; amounts are decimal strings, exact as the service writes them."""

    trade_record_count: int
    item_row_count: int
    payment_row_count: int
    net_sales_amount: str
    tax_amount: str
    tip_amount: str
    payment_total_amount: str

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ControlTotals | None:
        if data is None:
            return None
        return cls(
            int(data["trade_record_count"]),
            int(data["item_row_count"]),
            int(data["payment_row_count"]),
            str(data["net_sales_amount"]),
            str(data["tax_amount"]),
            str(data["tip_amount"]),
            str(data["payment_total_amount"]),
        )


@dataclass(frozen=True)
class DayStatus:
    """GET /daily-close/{store_id}/{business_date}: NOT_RECEIVED, RECEIVED, MATCHED or MISMATCHED.

    `details` (raw differences, batch_seqs received and missing, unmapped codes) is kept as the service sent it.
    """

    store_id: str
    business_date: str
    status: str
    checked_at: str | None
    expected: ControlTotals | None
    actual: ControlTotals | None
    differences: tuple[str, ...]
    details: dict[str, Any] | None
    reconciliation_due_at: str | None

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DayStatus:
        return cls(
            str(data["store_id"]),
            str(data["business_date"]),
            str(data["status"]),
            data.get("checked_at"),
            ControlTotals.from_json(data.get("expected")),
            ControlTotals.from_json(data.get("actual")),
            tuple(data.get("differences") or ()),
            data.get("details"),
            data.get("reconciliation_due_at"),
        )


@dataclass(frozen=True)
class Code:
    """One entry of a code list: its code, its names by language tag, and for transaction types their meaning."""

    code: str
    name: dict[str, str]
    is_revenue: bool | None = None
    amount_sign: int | None = None
    description: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Code:
        return cls(
            str(data["code"]),
            dict(data.get("name") or {}),
            data.get("is_revenue"),
            data.get("amount_sign"),
            data.get("description"),
        )


@dataclass(frozen=True)
class CodeList:
    """A reference code list and the date of its version."""

    version: str
    codes: tuple[Code, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CodeList:
        return cls(str(data["version"]), tuple(Code.from_json(item) for item in data["data"]))


@dataclass(frozen=True)
class Mapping:
    """One of the partner's transaction codes and the HQ standard type it stands for."""

    source_code: str
    standard_code: str
    source_name: str | None = None


@dataclass(frozen=True)
class MappingSet:
    """GET /mappings/transaction-types: the partner's mapping in effect (empty before the first one)."""

    partner_id: str
    batch_id: str | None
    updated_at: str | None
    mappings: tuple[Mapping, ...]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MappingSet:
        mappings = tuple(
            Mapping(str(item["source_code"]), str(item["standard_code"]), item.get("source_name"))
            for item in data.get("mappings") or ()
        )
        return cls(str(data["partner_id"]), data.get("batch_id"), data.get("updated_at"), mappings)


@dataclass(frozen=True)
class BatchOutcome:
    """One request of push_day: the trade record batch `batch_seq` (1, 2, ...), or the daily close (batch_seq 0)."""

    kind: str  # "trade-records" or "daily-close"
    batch_seq: int
    result: BatchResult


@dataclass(frozen=True)
class DayPush:
    """What push_day sent for one store-day: every trade record batch in order, then the daily close."""

    store_id: str
    business_date: str
    batches: tuple[BatchOutcome, ...]
    close: BatchOutcome

    @property
    def warnings(self) -> tuple[tuple[BatchOutcome, BatchWarning], ...]:
        return tuple(
            (outcome, warning) for outcome in (*self.batches, self.close) for warning in outcome.result.warnings
        )
