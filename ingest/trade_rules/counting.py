"""The rules that tell a partner how HQ will count a record, where that may surprise (decision 0027): a
source_transaction_type the mapping does not name, and a VOIDED record of a revenue type
(ingest/trade_rules/__init__.py says how rules work).

HQ counts by the standard type the partner's mapping gives the source type, not by status (the
specification's definitions: net_sales_amount over "transactions whose standard type has is_revenue = true",
counts over every transaction). So a record whose status is VOIDED but whose source type maps to SALE counts
its amounts in net_sales_amount and its payments in payment_total_amount, as any sale. A POS that leaves
voided sales out of its daily close must send them with a source type mapped to VOID (or with zero amounts
and no payments), or the day mismatches: the warning says so when the record would count.
"""

from __future__ import annotations

import functools

from ingest.trade_rules.common import SOURCE_TYPE_UNMAPPED, VOIDED_COUNTED_BY_TYPE, RecordAmounts
from ingest.wire.requests import TradeRecord
from ingest.wire.responses import BatchWarning
from reference.codes import standard_transaction_type


def source_type_unmapped(path: str, record: TradeRecord, standard_type: str | None) -> list[BatchWarning]:
    """SOURCE_TYPE_UNMAPPED: the partner's mapping does not name the record's source_transaction_type (the
    specification accepts it; HQ re-maps it once the mapping names it)."""
    if standard_type is not None:
        return []
    return [
        BatchWarning(
            SOURCE_TYPE_UNMAPPED,
            path,
            f"source_transaction_type {record.source_transaction_type} is not in your transaction type mapping: "
            "the record is stored and counted in trade_record_count, item_row_count and payment_row_count, but "
            "left out of net_sales_amount and of the sign rules until it is mapped. HQ re-maps it, and "
            "reconciles its days again, as soon as PUT /mappings/transaction-types names the code.",
            field="source_transaction_type",
        )
    ]


def voided_counted_by_type(
    path: str, record: TradeRecord, amounts: RecordAmounts, standard_type: str | None
) -> list[BatchWarning]:
    """VOIDED_COUNTED_BY_TYPE: a VOIDED record of a revenue type that carries net sales or payments."""
    if record.status != "VOIDED" or not _is_revenue(standard_type):
        return []
    net_sales = amounts.total_amount - amounts.tax_amount - amounts.tip_amount
    if net_sales == 0 and not any(amounts.payments):
        return []
    return [
        BatchWarning(
            VOIDED_COUNTED_BY_TYPE,
            path,
            f"status is VOIDED but source_transaction_type {record.source_transaction_type} maps to "
            f"{standard_type}, a revenue type: HQ counts a record by its standard type, not its status, so its "
            "amounts count in net_sales_amount and its payments in payment_total_amount. If your daily close "
            "leaves voided transactions out, send them with a source type mapped to VOID.",
            field="status",
        )
    ]


@functools.cache
def _is_revenue(standard_type: str | None) -> bool:
    entry = None if standard_type is None else standard_transaction_type(standard_type)
    return bool(entry and entry["is_revenue"])
