"""The queue message that asks for a store-day's reconciliation: small JSON, one close named."""

from __future__ import annotations

import datetime as dt

import orjson

from core.records import ReconcileRequest


def encode(request: ReconcileRequest) -> str:
    return orjson.dumps(
        {
            "partner_id": request.partner_id,
            "store_id": request.store_id,
            "business_date": request.business_date.isoformat(),
            "close_batch_id": request.close_batch_id,
        }
    ).decode()


def decode(body: bytes | str) -> ReconcileRequest:
    """Raises ValueError on a message this service did not write."""
    try:
        data = orjson.loads(body)
        return ReconcileRequest(
            str(data["partner_id"]),
            str(data["store_id"]),
            dt.date.fromisoformat(data["business_date"]),
            str(data["close_batch_id"]),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise ValueError(f"not a reconciliation request: {error}") from None
