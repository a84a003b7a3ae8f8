"""The checks of a store-day's write against its store's master data (POST /trade-records and POST
/daily-close): the currency and country checks need it, which PUT /stores sends first. Pure: the master
data is read by the write (ingest/write_flow.py)."""

from __future__ import annotations

from core.errors import FieldProblem
from core.records import StoreMaster


def no_store_master(store_id: str) -> list[FieldProblem]:
    """The one problem of a store-day's write whose store has no master data yet."""
    return [
        FieldProblem(
            "store_id",
            f"no store master data for {store_id} yet; send it with "
            "PUT /stores before its transactions and daily close",
        )
    ]


def store_currency_problem(path: str, currency: str, store: StoreMaster) -> list[FieldProblem]:
    if currency == store.currency:
        return []
    return [FieldProblem(path, f"must equal the store currency ({store.currency})")]
