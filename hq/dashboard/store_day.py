"""The store-day page's read model: expected, actual and difference per field, the causes, the batches
received, the product_ids the product master lacks, and the `hq` command that re-runs the day.

A reconciled day shows its stored result. A day not reconciled yet (RECEIVED, OVERDUE) or without a close
shows the day's totals as they are now, computed from the store-day's sums (one narrow read, as
reconciliation reads them) with the same functions reconciliation uses; its causes likewise.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Protocol

from core.money import currency_exponent
from core.ports import Admission, MasterReads, Overview, PartnerAdmin, Reconciliations, TradeRecordReads
from core.records import BatchMarker, ClosedDay, UnknownProduct
from core.stored_json import MovedOut, ResultDetails, TotalField
from hq.dashboard.overview import NotFound, cell_status
from reconcile.totals import (
    AMOUNT_FIELDS,
    TOTAL_FIELDS,
    compute_totals,
    differences,
    expected_minor,
    raw_differences,
)
from reference.codes import payment_directions_in_effect


class StoreDayStorage(PartnerAdmin, Admission, Overview, Reconciliations, TradeRecordReads, MasterReads, Protocol):
    """What the store-day page reads: the close, the day's sums and batches, its unknown products."""


@dataclass(frozen=True)
class FieldRow:
    field: TotalField
    expected: str  # as on the wire ("12.50"); "-" when there is no close
    actual: str
    difference: str  # actual - expected, signed ("+1", "-0.01", "0"); "-" when not comparable
    differs: bool  # beyond the tolerance (a count by any amount, an amount by more than one minor unit)


@dataclass(frozen=True)
class Cause:
    kind: str  # the name reconciliation's details give it (unmapped_source_codes, missing_batch_seqs, ...)
    values: list[str]


@dataclass(frozen=True)
class Findings:
    """What says why a day does not match: a result's details that are causes (the codes seen and the
    batch_seqs received are shown elsewhere on the page or are not causes), or the same found now."""

    raw_differences: Mapping[str, str | int] = field(default_factory=dict)  # actual - expected
    missing_batch_seqs: list[int] = field(default_factory=list)
    unmapped_source_codes: list[str] = field(default_factory=list)
    unknown_payment_types: list[str] = field(default_factory=list)
    records_moved_out: list[MovedOut] = field(default_factory=list)

    @classmethod
    def of_result(cls, details: ResultDetails | None) -> Findings:
        if details is None:
            return cls()
        return cls(
            details["raw_differences"],
            details["missing_batch_seqs"],
            details["unmapped_source_codes"],
            details["unknown_payment_types"],
            details.get("records_moved_out", []),
        )


@dataclass(frozen=True)
class StoreDayView:
    partner_id: str
    store_id: str
    business_date: dt.date
    status: str  # one of overview.STATUSES
    registered: bool
    close: ClosedDay | None
    reconciled: bool  # the actual column is the stored result (else: the day's totals now)
    fields: list[FieldRow]
    causes: list[Cause]
    batches: list[BatchMarker]
    unknown_products: list[UnknownProduct]
    rerun: str | None  # the shell command that reconciles the day again (None without a close)


def store_day(
    storage: StoreDayStorage, partner_id: str, store_id: str, business_date: dt.date, now: dt.datetime
) -> StoreDayView:
    if storage.get_partner(partner_id) is None:
        raise NotFound(f"unknown partner {partner_id}")
    registered = not storage.unregistered(partner_id, {store_id})
    close = storage.get_closed_day(partner_id, store_id, business_date)
    batches = storage.store_day_batches(partner_id, store_id, business_date)
    master = storage.get_store(partner_id, store_id)
    if not (registered or close or batches or master):
        raise NotFound(f"partner {partner_id} has no store {store_id}")
    reconciled = close is not None and close.actual is not None and close.status != "RECEIVED"
    if reconciled:
        assert close is not None and close.actual is not None
        fields, findings = _stored_result(close), Findings.of_result(close.details)
    else:
        currency = close.currency if close else (master.currency if master else None)
        fields, findings = _totals_now(storage, partner_id, store_id, business_date, close, currency, batches)
    return StoreDayView(
        partner_id,
        store_id,
        business_date,
        cell_status(close, now),
        registered,
        close,
        reconciled,
        fields,
        causes(findings),
        batches,
        storage.unknown_products(partner_id, store_id, business_date),
        rerun_command(partner_id, store_id, business_date) if close else None,
    )


def rerun_command(partner_id: str, store_id: str, business_date: dt.date) -> str:
    """The `hq` command that reconciles the day now (hq/reconciliations.py), quoted for a POSIX shell."""
    words = ["python", "-m", "hq", "reconcile", "run", partner_id, store_id, business_date.isoformat()]
    return " ".join(shlex.quote(word) for word in words)


def _signed(value: object) -> str:
    text = str(value)
    return text if text.startswith("-") or text == "0" else "+" + text


def _stored_result(close: ClosedDay) -> list[FieldRow]:
    actual = close.actual
    assert actual is not None
    raw = Findings.of_result(close.details).raw_differences
    return [
        FieldRow(
            name,
            _text(close.expected.get(name)),
            _text(actual[name]),
            _signed(raw.get(name, 0)),
            name in close.differences,
        )
        for name in TOTAL_FIELDS
    ]


def _text(value: object) -> str:
    return "-" if value is None else str(value)


def _totals_now(
    storage: StoreDayStorage,
    partner_id: str,
    store_id: str,
    business_date: dt.date,
    close: ClosedDay | None,
    currency: str | None,
    batches: list[BatchMarker],
) -> tuple[list[FieldRow], Findings]:
    """The day's totals as reconciliation would compute them now, compared with the close when there is one."""
    sums = storage.store_day_totals(partner_id, store_id, business_date)
    actual = compute_totals(
        sums,
        storage.get_mapping(partner_id).standard_code_of(),
        payment_directions_in_effect(storage.payment_directions(partner_id)),
    )
    exponent = currency_exponent(currency) if currency else None
    codes = Findings(
        unmapped_source_codes=sorted(actual.unmapped_source_codes),
        unknown_payment_types=sorted(actual.unknown_payment_types),
    )
    if exponent is None:  # no currency known (no close, no master data): amounts cannot be written
        rows = [
            FieldRow(name, "-", "-" if name in AMOUNT_FIELDS else str(actual.value(name)), "-", False)
            for name in TOTAL_FIELDS
        ]
        return rows, codes
    wire = actual.as_wire(exponent)
    if close is None:
        return [FieldRow(name, "-", str(wire[name]), "-", False) for name in TOTAL_FIELDS], codes
    expected = expected_minor(close.expected, exponent)
    raw = raw_differences(expected, actual, exponent)
    differing = differences(expected, actual)
    seqs = {marker.batch_seq for marker in batches}
    # batch_count is bounded by the wire format (MAX_BATCHES_PER_DAY), so the range is small.
    missing = [seq for seq in range(1, close.expected.get("batch_count", 0) + 1) if seq not in seqs]
    rows = [
        FieldRow(name, _text(close.expected.get(name)), str(wire[name]), _signed(raw.get(name, 0)), name in differing)
        for name in TOTAL_FIELDS
    ]
    return rows, replace(codes, raw_differences=raw, missing_batch_seqs=missing)


def causes(findings: Findings) -> list[Cause]:
    """The non-empty causes, in the order shown, each as a list of short texts."""
    found = [
        Cause("raw_differences", [f"{name} {_signed(delta)}" for name, delta in findings.raw_differences.items()]),
        Cause("missing_batch_seqs", [str(seq) for seq in findings.missing_batch_seqs]),
        Cause("unmapped_source_codes", list(findings.unmapped_source_codes)),
        Cause("unknown_payment_types", list(findings.unknown_payment_types)),
        Cause(
            "records_moved_out",
            [
                f"{moved['trade_record_id']} to {moved['to_store_id']} {moved['to_business_date']}"
                for moved in findings.records_moved_out
            ],
        ),
    ]
    return [cause for cause in found if cause.values]
