"""Control totals of a store-day, computed from the latest version of each transaction.

Definitions (specification 4.8; decisions 0044 and 0045): counts over latest versions (combo
children and voided lines included);
net sales = sum(total - tax - tip) over transactions whose mapped standard type is revenue;
payment total = sum(amount x direction of its payment_type), DEPOSIT_APPLIED (direction 0) not
counted again, unknown directions left out until HQ records them. Amounts within one minor unit
match; counts must be equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.money import format_minor_units, to_minor_units
from core.records import StoreDayTotals
from core.stored_json import AmountField, CountField, JsonObject, ResultTotals, TotalField, TypeBreakdown
from reference.codes import standard_transaction_type

COUNT_FIELDS: tuple[CountField, ...] = ("trade_record_count", "item_row_count", "payment_row_count")
AMOUNT_FIELDS: tuple[AmountField, ...] = ("net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount")
TOTAL_FIELDS: tuple[TotalField, ...] = COUNT_FIELDS + AMOUNT_FIELDS


@dataclass
class DayTotals:
    trade_record_count: int = 0
    item_row_count: int = 0
    payment_row_count: int = 0
    net_sales_amount: int = 0  # minor units
    tax_amount: int = 0
    tip_amount: int = 0
    payment_total_amount: int = 0
    unmapped_source_codes: set[str] = field(default_factory=set)
    unknown_payment_types: set[str] = field(default_factory=set)
    source_codes: set[str] = field(default_factory=set)

    def value(self, name: TotalField) -> int:
        value: int = getattr(self, name)
        return value

    def as_wire(self, exponent: int) -> ResultTotals:
        return ResultTotals(
            trade_record_count=self.trade_record_count,
            item_row_count=self.item_row_count,
            payment_row_count=self.payment_row_count,
            net_sales_amount=format_minor_units(self.net_sales_amount, exponent),
            tax_amount=format_minor_units(self.tax_amount, exponent),
            tip_amount=format_minor_units(self.tip_amount, exponent),
            payment_total_amount=format_minor_units(self.payment_total_amount, exponent),
        )


def compute_totals(day: StoreDayTotals, standard_of: dict[str, str], directions: dict[str, int]) -> DayTotals:
    """The day's totals from its sums per source code and per payment type: the mapping and the
    directions are applied to a few groups, not to every record (both are linear, so it is the same)."""
    totals = DayTotals()
    revenue_types = {code for code in set(standard_of.values()) if _is_revenue(code)}
    for source_code, group in day.by_source_type.items():
        totals.trade_record_count += group.records
        totals.item_row_count += group.item_rows
        totals.payment_row_count += group.payment_rows
        totals.tax_amount += group.tax_minor
        totals.tip_amount += group.tip_minor
        totals.source_codes.add(source_code)
        standard = standard_of.get(source_code)
        if standard is None:
            totals.unmapped_source_codes.add(source_code)
        elif standard in revenue_types:
            totals.net_sales_amount += group.total_minor - group.tax_minor - group.tip_minor
    for payment_type, amount in day.payments_minor.items():
        direction = directions.get(payment_type)
        if direction is None:
            totals.unknown_payment_types.add(payment_type)
        else:
            totals.payment_total_amount += amount * direction
    return totals


def counted_record(
    sums: tuple[str, int, int, int, int, int, dict[str, int]], standard_of: dict[str, str], directions: dict[str, int]
) -> DayTotals:
    """What one record adds to its day's totals: the day's rule (compute_totals) over that record alone, so
    that a record's counted amounts and the day's totals are one computation (decision 0096)."""
    return compute_totals(StoreDayTotals.of_records([sums]), standard_of, directions)


def totals_by_source_type(
    day: StoreDayTotals, standard_of: dict[str, str], directions: dict[str, int]
) -> dict[str, DayTotals]:
    """The day's totals per source code (payments aside: a day sums them per payment_type), each by the
    day's rule over that code's group alone."""
    return {
        code: compute_totals(StoreDayTotals({code: group}, {}), standard_of, directions)
        for code, group in sorted(day.by_source_type.items())
    }


def breakdown_by_type(
    day: StoreDayTotals, standard_of: dict[str, str], directions: dict[str, int], exponent: int
) -> dict[str, TypeBreakdown]:
    """The day's counts and amounts per source code, as a result's details keep them (decision 0096)."""
    breakdown: dict[str, TypeBreakdown] = {}
    for code, totals in totals_by_source_type(day, standard_of, directions).items():
        wire = totals.as_wire(exponent)
        breakdown[code] = TypeBreakdown(
            standard_type=standard_of.get(code),
            is_revenue=is_revenue(standard_of.get(code)),
            trade_record_count=wire["trade_record_count"],
            item_row_count=wire["item_row_count"],
            payment_row_count=wire["payment_row_count"],
            net_sales_amount=wire["net_sales_amount"],
            tax_amount=wire["tax_amount"],
            tip_amount=wire["tip_amount"],
        )
    return breakdown


def is_revenue(standard_code: str | None) -> bool:
    """Whether records of this standard type count in net sales (never an unmapped code's)."""
    return standard_code is not None and _is_revenue(standard_code)


def _is_revenue(standard_code: str) -> bool:
    entry = standard_transaction_type(standard_code)
    return entry is not None and bool(entry.get("is_revenue"))


ExpectedTotals = dict[TotalField, int]  # a close's control totals as integers (amounts in minor units)


def expected_minor(expected: JsonObject, exponent: int) -> ExpectedTotals:
    """The daily close's control totals (as sent, see ClosedDay.expected) as integers."""
    values: ExpectedTotals = {name: expected[name] for name in COUNT_FIELDS}
    values.update({name: to_minor_units(expected[name], exponent) for name in AMOUNT_FIELDS})
    return values


def differences(expected: ExpectedTotals, actual: DayTotals) -> list[str]:
    """Names of the fields that do not match: counts exactly, amounts within one minor unit."""
    names: list[str] = [name for name in COUNT_FIELDS if expected[name] != actual.value(name)]
    names += [name for name in AMOUNT_FIELDS if abs(expected[name] - actual.value(name)) > 1]
    return names


def raw_differences(expected: ExpectedTotals, actual: DayTotals, exponent: int) -> dict[str, str | int]:
    """actual - expected for every field that differs at all (also within tolerance)."""
    raw: dict[str, str | int] = {}
    for name in TOTAL_FIELDS:
        delta = actual.value(name) - expected[name]
        if delta:
            raw[name] = delta if name in COUNT_FIELDS else format_minor_units(delta, exponent)
    return raw
