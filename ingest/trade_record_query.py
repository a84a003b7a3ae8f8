"""GET /pos/v1/trade-records?store_id=S&business_date=D: the partner's request for a page of a store-day's
records as HQ counts them, checked (its parameters, the store registered for the partner) before
reconcile.counted_records answers it (decision 0096)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import TypeAdapter, ValidationError

from core.day_records import CONTINUATION_PROBLEM, MAX_DAY_RECORDS_PAGE, DayRecordsQuery, cursor_of
from core.errors import FieldProblem, invalid_payload
from core.ports import Admission
from core.records import Partner
from ingest import access
from ingest.daily_close_status import parse_business_date, store_day_problems
from ingest.wire.scalars import Code

DEFAULT_PAGE = 100
_CODE = TypeAdapter(Code)


def checked_query(storage: Admission, partner: Partner, params: Mapping[str, str]) -> DayRecordsQuery:
    """The query the parameters ask for: 400 INVALID_PAYLOAD naming each parameter that is wrong, 403
    STORE_NOT_ALLOWED for a store not registered for the partner."""
    store_id, date_text = params.get("store_id"), params.get("business_date")
    problems = [FieldProblem(name, "is required") for name in ("store_id", "business_date") if not params.get(name)]
    if not problems:
        problems += store_day_problems(store_id or "", date_text or "")
    limit = _limit(params.get("limit"), problems)
    source_type = params.get("transaction_type") or None
    if source_type is not None and not _is_code(source_type):
        problems.append(FieldProblem("transaction_type", "must be a source transaction type code"))
    if problems:
        raise invalid_payload(problems)
    assert store_id is not None and date_text is not None
    business_date = parse_business_date(date_text)
    cursor = None
    continuation = params.get("continuation")
    if continuation:
        try:
            cursor = cursor_of(continuation, store_id, business_date, source_type)
        except ValueError:
            raise invalid_payload([FieldProblem("continuation", CONTINUATION_PROBLEM)]) from None
    access.require_registered(storage, partner.partner_id, [store_id])
    return DayRecordsQuery(store_id, business_date, limit, cursor, source_type)


def _limit(text: str | None, problems: list[FieldProblem]) -> int:
    if text is None or text == "":
        return DEFAULT_PAGE
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_DAY_RECORDS_PAGE:
        return int(text)
    problems.append(FieldProblem("limit", f"must be a whole number from 1 to {MAX_DAY_RECORDS_PAGE}"))
    return DEFAULT_PAGE


def _is_code(text: str) -> bool:
    try:
        _CODE.validate_python(text)
    except ValidationError:
        return False
    return True
