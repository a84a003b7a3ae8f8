"""`hq reconcile show`'s breakdown of a result by transaction type (decision 0096): what HQ counted per
source_transaction_type, so that HQ and the partner compare per type before comparing records."""

from __future__ import annotations

from core.stored_json import ResultDetails
from hq.output import code_list, table

COLUMNS = ["TYPE", "COUNTED AS", "REVENUE", "RECORDS", "ITEM ROWS", "PAYMENT ROWS", "NET SALES", "TAX", "TIP"]


def breakdown_table(details: ResultDetails | None) -> str | None:
    """The breakdown as a table, or None for a result saved before it was kept."""
    breakdown = None if details is None else details.get("by_transaction_type")
    if not breakdown:
        return None
    rows = [
        [
            code_list([code]),
            per_type["standard_type"] or "(unmapped)",
            "yes" if per_type["is_revenue"] else "no",
            str(per_type["trade_record_count"]),
            str(per_type["item_row_count"]),
            str(per_type["payment_row_count"]),
            per_type["net_sales_amount"],
            per_type["tax_amount"],
            per_type["tip_amount"],
        ]
        for code, per_type in breakdown.items()
    ]
    return "counted per transaction type (payments are counted per payment_type):\n" + table(COLUMNS, rows)
