"""Valid request bodies to start from; tests change one thing at a time."""

from __future__ import annotations

import copy
import uuid


def batch_id() -> str:
    return str(uuid.uuid4())


def store(store_id: str = "S1", **changes) -> dict:
    body = {
        "store_id": store_id,
        "store_name": f"Store {store_id}",
        "country_code": "US",
        "currency": "USD",
        "time_zone": "America/New_York",
        "locale": "en-US",
        "workday_start": "04:00",
        "prices_include_tax": False,
        "status": "ACTIVE",
        "last_modified_at": "2026-11-01T09:00:00-05:00",
    }
    body.update(changes)
    return body


def stores_batch(*stores: dict, **changes) -> dict:
    return {"batch_id": batch_id(), "stores": list(stores) or [store()], **changes}


def product(product_id: str = "P-BURGER", **changes) -> dict:
    body = {
        "product_id": product_id,
        "name": {"en-US": "Cheeseburger", "zh-TW": "起司漢堡"},
        "unit_price": "5.50",
        "currency": "USD",
        "tax_category": "STANDARD",
        "status": "ACTIVE",
        "version": 1,
        "last_modified_at": "2026-11-01T09:00:00Z",
        "product_type": "SINGLE",
        "modifier_group_ids": ["G-CHEESE"],
    }
    body.update(changes)
    return body


def combo(product_id: str = "P-COMBO", **changes) -> dict:
    body = product(
        product_id,
        name={"en-US": "Burger combo"},
        unit_price="8.99",
        product_type="COMBO",
        modifier_group_ids=[],
        combo_components=[
            {"product_id": "P-BURGER", "quantity": "1", "is_substitutable": False},
            {"product_id": "P-FRIES", "quantity": "1", "is_substitutable": False},
            {"product_id": "P-COLA", "quantity": "1", "is_substitutable": True, "substitute_group_id": "G-DRINKS"},
        ],
    )
    body.update(changes)
    return body


def modifier_group(group_id: str = "G-CHEESE", **changes) -> dict:
    body = {
        "group_id": group_id,
        "name": {"en-US": "Extra cheese"},
        "min_select": 0,
        "max_select": 2,
        "options": [
            {"option_id": "O-CHEDDAR", "name": {"en-US": "Cheddar"}, "price_delta": "0.50"},
            {"option_id": "O-NONE", "name": {"en-US": "No cheese"}, "price_delta": "0.00", "is_default": True},
        ],
    }
    body.update(changes)
    return body


def products_batch(products: list[dict] | None = None, groups: list[dict] | None = None, **changes) -> dict:
    body = {"batch_id": batch_id(), "products": [product()] if products is None else products}
    if groups is not None:
        body["modifier_groups"] = groups
    body.update(changes)
    return body


def mapping_batch(*entries: tuple[str, str], **changes) -> dict:
    entries = entries or (("01", "SALE"), ("02", "REFUND"))
    return {
        "batch_id": batch_id(),
        "mappings": [{"source_code": s, "source_name": f"POS {s}", "standard_code": c} for s, c in entries],
        **changes,
    }


def changed(body: dict, path: str, value) -> dict:
    """A deep copy of body with one field set (path like 'stores.0.currency'); value DELETE removes it."""
    copied = copy.deepcopy(body)
    *parents, last = path.split(".")
    target = copied
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key = int(last) if last.isdigit() else last
    if value is DELETE:
        del target[key]
    else:
        target[key] = value
    return copied


DELETE = object()


# -- reading answers ----------------------------------------------------------------------------


def problem_of(response, status: int, code: str) -> dict:
    """The RFC 9457 problem document of an error answer, after checking its status, media type,
    the specification's code and the members every problem carries."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"].split(";")[0].strip() == "application/problem+json", response.headers
    body = response.json()
    assert body["status"] == status and body["code"] == code, body
    for member in ("type", "title", "detail"):
        assert isinstance(body[member], str) and body[member], (member, body)
    return body


def error_paths(response, status: int = 400, code: str = "INVALID_PAYLOAD") -> list[str]:
    """The paths of the problems listed in an error answer, in order."""
    return [error["path"] for error in problem_of(response, status, code)["errors"]]
