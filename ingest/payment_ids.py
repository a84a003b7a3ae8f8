"""payment_id is unique within the partner (spec 2, Payment): reuse is reported, never refused.

A payment of a record is reported (PAYMENT_ID_REUSED, at the record's path, field `payments[k].payment_id`)
when its payment_id is used by another trade_record_id of the partner: by the latest version of a record
already stored (any store, any business date), or by an earlier record of the same batch. A new version of
a trade record keeps its own payment_ids without a warning. The stored users of a whole batch's ids come
from one storage look-up (`Storage.trade_records_by_payment_id`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ingest.wire.requests import TradeRecord
from ingest.wire.responses import BatchWarning

PAYMENT_ID_REUSED = "PAYMENT_ID_REUSED"
PAYMENT_ID_WARNING_CODES = {
    PAYMENT_ID_REUSED: "a payment_id is already used by another trade_record_id of the partner (stored, or "
    "earlier in the same batch); payment_id is unique within the partner",
}
# A payment_id used by many records is named with a few of them: enough to find the others.
NAMED_RECORDS = 3


def batch_payment_ids(records: Sequence[TradeRecord]) -> set[str]:
    return {payment.payment_id for record in records for payment in record.payments}


def reused_payment_ids(records: Sequence[TradeRecord], stored_users: dict[str, set[str]]) -> list[BatchWarning]:
    """One warning per payment whose payment_id another trade_record_id uses, in the batch's order."""
    if not stored_users and _all_distinct(records):  # the usual batch of new payments: nothing to report
        return []
    first_in_batch: dict[str, tuple[int, str]] = {}  # payment_id -> (index, trade_record_id) of its first use
    warnings = []
    for index, record in enumerate(records):
        for k, payment in enumerate(record.payments):
            payment_id = payment.payment_id
            users = stored_users.get(payment_id)  # most payment_ids are new: no set built for them
            others = sorted(users - {record.trade_record_id}) if users else []
            earlier = first_in_batch.setdefault(payment_id, (index, record.trade_record_id))
            if others:
                message = _stored_message(others)
            elif earlier[1] != record.trade_record_id:
                message = (
                    f"trade_records[{earlier[0]}] of this batch, another trade_record_id, uses this payment_id "
                    "too; payment_id is unique within the partner"
                )
            else:
                continue
            warnings.append(
                BatchWarning(PAYMENT_ID_REUSED, f"trade_records[{index}]", message, field=f"payments[{k}].payment_id")
            )
    return warnings


def _all_distinct(records: Sequence[TradeRecord]) -> bool:
    """Whether no payment_id of records is used twice (then none is used by another record of the batch)."""
    payment_ids = [payment.payment_id for record in records for payment in record.payments]
    return len(set(payment_ids)) == len(payment_ids)


def _stored_message(others: list[str]) -> str:
    # Trade record ids are the partner's own transaction codes (never personal data): naming them lets the
    # partner find the clash. The payment_id itself is not repeated: the field locates it.
    named = ", ".join(json.dumps(trade_record_id, ensure_ascii=False) for trade_record_id in others[:NAMED_RECORDS])
    more = f" and {len(others) - NAMED_RECORDS} more" if len(others) > NAMED_RECORDS else ""
    return (
        f"this payment_id is already used by trade record {named}{more} of this partner; payment_id is "
        "unique within the partner"
    )
