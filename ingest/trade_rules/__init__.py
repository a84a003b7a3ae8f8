"""The recording rules of trade records (spec 4.7) that warn without rejecting.

A record that breaks one of these rules is still stored; the 202 response lists one warning per broken
rule, located at the record (path `trade_records[3]`, as the specification shows it) with the field
concerned relative to the record (field `items[1].line_amount`). Every rule is a small pure
function over the parsed record; `record_warnings` runs them all in a fixed order (the order of the
rules below, then the order of lines and payments), so the same record always gets the same list.

Money is compared in integer minor units: the caller reads every amount once, checking its places, and
hands the rules a `RecordAmounts`. Quantities are free decimal strings, so a line's quantity x unit_price
is computed exactly with integers scaled by the quantity's own places. Messages are built only for a
rule that fails.

Messages name the expected and the actual amounts but never echo member_id or free text.

Decisions the specification leaves open:

- Voided lines (`is_voided`, deleted before checkout) take no part in the money rules (line amount,
  signs, exchange sides): POS systems record their amounts differently and they carry no revenue. They
  are still checked as combo children, which is about the structure of the record.
- Zero carries no direction: a sign rule never flags a zero quantity or amount (a combo child of a
  returned combo, a free or fully discounted item, a zero tip).
- In RETURN and REFUND transactions every transaction amount except rounding_amount (which may go
  either way) is expected negative or zero, as spec 4.7 says ("subtotal_amount, discount_amount,
  tax_amount, total_amount and the rest").
- A record that refers to an earlier transaction (original_trade_record_id set, or a RETURN or REFUND)
  may keep the business date of that transaction (spec 4.7, refunds rule 1), so its business date is
  not derived from opened_at.
- closed_at is null while a transaction is OPEN (spec 2): a warning, not an error, as the validation
  table of spec 4.7 does not list it. The converse (a closed status without closed_at) is not warned
  about: the field is optional, HQ derives nothing from it, and a POS that records no closing time
  could not act on a warning repeated on every record.

The rules by concern: trade_rules/amounts.py (money), lines.py (combos and signs), dates.py (business
date and status), counting.py (how HQ will count it: an unmapped source type, a VOIDED record of a revenue
type); common.py holds the warning codes and the record's amounts.
"""

from __future__ import annotations

from ingest.trade_rules.amounts import amount_identity, line_amounts, payment_amounts, payment_types_without_direction
from ingest.trade_rules.common import RecordAmounts
from ingest.trade_rules.counting import source_type_unmapped, voided_counted_by_type
from ingest.trade_rules.dates import business_date, closed_while_open
from ingest.trade_rules.lines import combo_children, transaction_signs
from ingest.wire.requests import TradeRecord
from ingest.wire.responses import BatchWarning


def record_warnings(
    path: str,
    record: TradeRecord,
    amounts: RecordAmounts,
    standard_type: str | None,
    known_payment_types: set[str],
    store_time_zone: str | None,
    workday_start: str | None,
) -> list[BatchWarning]:
    """Every recording-rule warning of one record, in a stable order.

    path: where the record sits in the request ("trade_records[17]"); amounts: the record's amounts
    in minor units; standard_type: the HQ type the partner's mapping gives the record's
    source_transaction_type (None when unmapped: no sign rules); known_payment_types: payment types
    whose direction HQ knows; store_time_zone, workday_start: from the store master (None when the
    store is unknown: no business date rule).
    """
    # The payment rules and closed_at can only warn for some records: they are called only for those
    # (they walked every payment of every record to find nothing), and still check everything themselves.
    warnings = source_type_unmapped(path, record, standard_type) if standard_type is None else []
    warnings += amount_identity(path, record, amounts)
    warnings += combo_children(path, record, amounts)
    warnings += line_amounts(path, record, amounts)
    warnings += transaction_signs(path, record, amounts, standard_type)
    if amounts.payments and min(amounts.payments) < 0:
        warnings += payment_amounts(path, record, amounts)
    if not known_payment_types.issuperset(amounts.payments_by_type):  # its keys: the record's payment types
        warnings += payment_types_without_direction(path, record, known_payment_types)
    warnings += business_date(path, record, standard_type, store_time_zone, workday_start)
    if record.status == "OPEN":
        warnings += closed_while_open(path, record)
    elif record.status == "VOIDED":
        warnings += voided_counted_by_type(path, record, amounts, standard_type)
    return warnings
