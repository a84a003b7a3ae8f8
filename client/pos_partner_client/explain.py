"""Which transactions make a store-day differ: the records a partner pushed (its day folder) against the
records HQ counted (GET /trade-records), each side counted by HQ's rules in effect (the answer's `counting`),
so that the differences listed add up, per control total, to the reconciliation's (HQ's actual - the close's
expected). What they do not explain is the close's own counting: `close_vs_records`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

COUNTS = ("trade_record_count", "item_row_count", "payment_row_count")
AMOUNTS = ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")
TOTALS = COUNTS + AMOUNTS
Totals = dict[str, Decimal]


@dataclasses.dataclass(frozen=True)
class CountedDay:
    """A store-day's records as HQ counted them, every page of GET /trade-records gathered."""

    store_id: str
    business_date: str
    currency: str | None
    records: list[dict[str, Any]]  # each as the service answers it (trade_record_id, version, counted, ...)
    moved_out: list[dict[str, Any]]
    counting: dict[str, Any]  # transaction_types and payment_directions in effect


@dataclasses.dataclass(frozen=True)
class RecordDifference:
    """One transaction that explains part of a difference. `fields`: for each field that differs, the
    partner's and HQ's values (None on the side that lacks the record) and, for control totals, what it adds
    to the reconciliation's difference (HQ's - the partner's)."""

    trade_record_id: str
    fields: dict[str, dict[str, Any]]
    note: str | None = None  # e.g. where HQ moved it, or why HQ counts it so


@dataclasses.dataclass(frozen=True)
class Explanation:
    store_id: str
    business_date: str
    status: str  # the day's reconciliation status
    differences: dict[str, dict[str, str]]  # per control total that differs: reconciliation, explained, unexplained
    missing_at_hq: list[RecordDifference]
    only_at_hq: list[RecordDifference]
    different: list[RecordDifference]
    close_vs_records: dict[str, str]  # the close's totals - the partner's records counted by HQ's rules
    # HQ's records counted by a rule a POS's close often does not follow (a VOIDED sale counted by its
    # type, an unmapped type, a payment_type without a direction): where to look when the close differs
    # from its own records.
    counted_by_rule: list[RecordDifference]

    @property
    def explained(self) -> bool:
        """Whether the records listed account for every difference (nothing left to the close itself)."""
        return all(Decimal(entry["unexplained"]) == 0 for entry in self.differences.values())

    def as_json(self) -> dict[str, Any]:
        """The explanation as `pos-partner explain --format json` writes it (amounts as decimal strings)."""
        return {
            "store_id": self.store_id,
            "business_date": self.business_date,
            "status": self.status,
            "differences": self.differences,
            "missing_at_hq": [_entry_json(entry) for entry in self.missing_at_hq],
            "only_at_hq": [_entry_json(entry) for entry in self.only_at_hq],
            "different": [_entry_json(entry) for entry in self.different],
            "close_vs_records": self.close_vs_records,
            "counted_by_rule": [_entry_json(entry) for entry in self.counted_by_rule],
        }


def _entry_json(entry: RecordDifference) -> dict[str, Any]:
    fields = {
        name: {side: str(value) if isinstance(value, Decimal) else value for side, value in values.items()}
        for name, values in entry.fields.items()
    }
    return {"trade_record_id": entry.trade_record_id, "fields": fields, "note": entry.note}


def latest_versions(records: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The version of each record HQ keeps: the highest version, then the latest last_modified_at as sent."""
    latest: dict[str, Mapping[str, Any]] = {}
    for record in records:
        known = latest.get(str(record["trade_record_id"]))
        if known is None or (record["version"], str(record.get("last_modified_at"))) > (
            known["version"],
            str(known.get("last_modified_at")),
        ):
            latest[str(record["trade_record_id"])] = record
    return latest


def counted_by_rules(record: Mapping[str, Any], counting: Mapping[str, Any]) -> Totals:
    """What one of the partner's records adds to each control total, by HQ's rules in effect (the
    specification's: net sales over revenue types, payments by their direction, unknown ones not counted)."""
    kind = counting["transaction_types"].get(record["source_transaction_type"])
    directions: Mapping[str, int] = counting["payment_directions"]
    total, tax, tip = (Decimal(str(record[name])) for name in ("total_amount", "tax_amount", "tip_amount"))
    return {
        "trade_record_count": Decimal(1),
        "item_row_count": Decimal(len(record["items"])),
        "payment_row_count": Decimal(len(record["payments"])),
        "net_sales_amount": total - tax - tip if kind and kind["is_revenue"] else Decimal(0),
        "tax_amount": tax,
        "tip_amount": tip,
        "payment_total_amount": sum(
            (Decimal(str(pay["amount"])) * directions.get(pay["payment_type"], 0) for pay in record["payments"]),
            Decimal(0),
        ),
    }


def hq_counted(record: Mapping[str, Any]) -> Totals:
    return {name: Decimal(str(record["counted"][name])) for name in TOTALS}


def explain(
    records: Iterable[Mapping[str, Any]],
    close: Mapping[str, Any],
    counted: CountedDay,
    status: str = "",
    reconciliation: Mapping[str, Any] | None = None,
) -> Explanation:
    """Compare the partner's records and close of a store-day with HQ's counted records. `reconciliation`:
    the day's result (expected and actual, as GET /daily-close answers); without it the difference is HQ's
    counted records - the close given."""
    ours = latest_versions(records)
    theirs = {str(record["trade_record_id"]): record for record in counted.records}
    moved = {str(entry["trade_record_id"]): entry for entry in counted.moved_out}
    missing, only, different = [], [], []
    records_total: Totals = dict.fromkeys(TOTALS, Decimal(0))
    for record_id, record in sorted(ours.items()):
        mine = counted_by_rules(record, counted.counting)
        records_total = {name: records_total[name] + mine[name] for name in TOTALS}
        hq = theirs.get(record_id)
        if hq is None:
            went = moved.get(record_id)
            note = f"HQ moved it to {went['to_store_id']} {went['to_business_date']}" if went else None
            missing.append(RecordDifference(record_id, _fields(mine, None, record["version"], None), note))
            continue
        fields = _fields(mine, hq_counted(hq), record["version"], hq["version"])
        if record["source_transaction_type"] != hq["transaction_type"]:
            fields["transaction_type"] = {"partner": record["source_transaction_type"], "hq": hq["transaction_type"]}
        if fields:
            different.append(RecordDifference(record_id, fields, _why(hq)))
    for record_id, hq in sorted(theirs.items()):
        if record_id not in ours:
            fields = _fields(None, hq_counted(hq), None, hq["version"])
            only.append(RecordDifference(record_id, fields, f"batch {hq.get('batch_id')}"))
    hq_total = {name: sum((hq_counted(record)[name] for record in counted.records), Decimal(0)) for name in TOTALS}
    expected = {name: Decimal(str(close[name])) for name in TOTALS}
    if reconciliation and reconciliation.get("expected") and reconciliation.get("actual"):
        expected = {name: Decimal(str(reconciliation["expected"][name])) for name in TOTALS}
        hq_total = {name: Decimal(str(reconciliation["actual"][name])) for name in TOTALS}
    differences = {}
    for name in TOTALS:
        gap = hq_total[name] - expected[name]
        listed = sum(
            (entry.fields[name]["difference"] for entry in missing + only + different if name in entry.fields),
            Decimal(0),
        )
        if gap or listed:
            differences[name] = {"reconciliation": str(gap), "explained": str(listed), "unexplained": str(gap - listed)}
    return Explanation(
        counted.store_id,
        counted.business_date,
        status,
        differences,
        missing,
        only,
        different,
        {name: str(expected[name] - records_total[name]) for name in TOTALS if expected[name] != records_total[name]},
        [
            RecordDifference(str(hq["trade_record_id"]), _fields(None, hq_counted(hq), None, None), _why(hq))
            for hq in counted.records
            if hq.get("counting_notes")
        ],
    )


def _fields(mine: Totals | None, hq: Totals | None, my_version: Any, hq_version: Any) -> dict[str, dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = {}
    if my_version != hq_version and mine is not None and hq is not None:
        fields["version"] = {"partner": my_version, "hq": hq_version}
    for name in TOTALS:
        partner = None if mine is None else mine[name]
        counted = None if hq is None else hq[name]
        difference = (counted or Decimal(0)) - (partner or Decimal(0))
        if difference:
            fields[name] = {"partner": partner, "hq": counted, "difference": difference}
    return fields


def _why(hq: Mapping[str, Any]) -> str | None:
    notes = hq.get("counting_notes") or []
    return ", ".join(notes) if notes else None
