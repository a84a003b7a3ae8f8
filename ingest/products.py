"""PUT /products: products and modifier groups (spec 4.6), in the shape of every write
(ingest/write_flow.py): its checks read the currencies of the stores its products are specific to.

A product is keyed by product_id and store_id (none = all stores); a lower version never
overwrites a stored higher one, and with equal versions the later last_modified_at wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import FieldProblem
from core.ports import Admission, BatchMarkers, BatchWrites, MasterReads
from core.records import ModifierGroupMaster, Partner, ProductMaster
from ingest.amounts import money_problems, raw_money_problems
from ingest.batches import BatchOutcome, NewBatch, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.empty_values import empty_value_warnings, warned_empty_values
from ingest.parsing import Refused, duplicates, list_member, raise_if_any, readable
from ingest.stored_size import oversized_masters
from ingest.wire.requests import ModifierGroup, Product, ProductsBatch
from ingest.wire.resend_keys import ProductsKey
from ingest.write_flow import Checked, Opened, Write, accept_opened, open_batch


class PutProductsStorage(Admission, BatchMarkers, BatchWrites, MasterReads, Protocol):
    """What PUT /products uses of storage: the stores' currencies are read from their master data."""


def _product_problems(index: int, product: Product) -> list[FieldProblem]:
    at = f"products[{index}]"
    problems = money_problems([(f"{at}.unit_price", product.unit_price)], product.currency)
    if product.combo_components and product.product_type != "COMBO":
        problems.append(FieldProblem(f"{at}.combo_components", "only COMBO products have combo_components"))
    for number, component in enumerate(product.combo_components):
        if component.is_substitutable and not component.substitute_group_id:
            problems.append(
                FieldProblem(
                    f"{at}.combo_components[{number}].substitute_group_id", "required when is_substitutable is true"
                )
            )
    return problems


def _group_problems(index: int, group: ModifierGroup) -> list[FieldProblem]:
    at = f"modifier_groups[{index}]"
    problems = []
    if group.max_select < group.min_select:
        problems.append(FieldProblem(f"{at}.max_select", "must be at least min_select"))
    problems += _duplicate_options(at, [option.option_id for option in group.options])
    return problems


def _duplicate_options(at: str, option_ids: list[Any]) -> list[FieldProblem]:
    return duplicates(option_ids, f"{at}.options", "option_id")


def _duplicate_keys(product_keys: list[Any], group_ids: list[Any]) -> list[FieldProblem]:
    problems = duplicates(product_keys, "products", "product_id")
    return problems + duplicates(group_ids, "modifier_groups", "group_id")


def _body_problems(batch: ProductsBatch) -> list[FieldProblem]:
    problems = _duplicate_keys(
        [(p.product_id, p.store_id) for p in batch.products], [g.group_id for g in batch.modifier_groups]
    )
    for index, product in enumerate(batch.products):
        problems += _product_problems(index, product)
    for index, group in enumerate(batch.modifier_groups):
        problems += _group_problems(index, group)
    return problems


def _readable_problems(refused: Refused) -> list[FieldProblem]:
    """A refused batch's problems beyond pydantic's: repeated keys among those that can be read, every
    check of the products and groups that are valid, the amounts of the others."""
    keys = [
        (readable(p.get("product_id")), None if p.get("store_id") is None else readable(p["store_id"]))
        if isinstance(p, dict)
        else object()
        for p in refused.entries("products")
    ]
    problems = _duplicate_keys(keys, refused.readable_values("modifier_groups", "group_id"))
    for index, product in refused.valid_entries("products", Product):
        problems += _product_problems(index, product)
    for index, raw in refused.refused_entries("products"):
        problems += raw_money_problems(raw, Product, f"products[{index}]")
    for index, group in refused.valid_entries("modifier_groups", ModifierGroup):
        problems += _group_problems(index, group)
    for index, raw in refused.refused_entries("modifier_groups"):
        options = list_member(raw, "options")
        problems += _duplicate_options(
            f"modifier_groups[{index}]",
            [readable(option.get("option_id")) if isinstance(option, dict) else object() for option in options],
        )
    return problems


PRODUCTS = Write(
    "products",
    ProductsBatch,
    ProductsKey,
    meaning_of_body(ProductsBatch),
    _readable_problems,
    lambda batch: {p.store_id for p in batch.products if p.store_id is not None},
)


@dataclass(slots=True)
class CheckedProducts(Checked):
    products: list[ProductMaster] = field(default_factory=list)  # what is saved
    groups: list[ModifierGroupMaster] = field(default_factory=list)


def put_products(
    storage: PutProductsStorage, partner: Partner, body: bytes, *, validate_only: bool = False
) -> BatchOutcome:
    opened = open_batch(storage, partner.partner_id, PRODUCTS, body)
    if isinstance(opened, BatchOutcome):  # a resend
        return opened
    currencies = read_needs(storage, partner.partner_id, opened.batch)
    checked = check(opened, currencies)
    raise_if_any(checked.problems, body)
    return save(storage, partner.partner_id, opened, checked, validate_only)


def read_needs(storage: MasterReads, partner_id: str, batch: ProductsBatch) -> dict[str, str | None]:
    """The currency of each store a product is specific to, from its master data (None: not sent yet)."""
    currencies: dict[str, str | None] = {}
    for product in batch.products:
        if product.store_id is not None and product.store_id not in currencies:
            store = storage.get_store(partner_id, product.store_id)
            currencies[product.store_id] = None if store is None else store.currency
    return currencies


def check(opened: Opened[ProductsBatch], currencies: dict[str, str | None]) -> CheckedProducts:
    """The body's own checks and the currency of each store-specific product against its store's
    (`currencies`: `read_needs`); then the size of what is stored, and the warnings."""
    batch, body = opened.batch, opened.body
    problems = _body_problems(batch) + _store_currency_problems(batch.products, currencies)
    if problems:
        return CheckedProducts(problems)
    products = [
        ProductMaster(p.product_id, p.store_id, p.version, p.last_modified_at, p.model_dump(mode="json"))
        for p in batch.products
    ]
    groups = [ModifierGroupMaster(g.group_id, g.model_dump(mode="json")) for g in batch.modifier_groups]
    problems = oversized_masters(products, groups)
    if problems:
        return CheckedProducts(problems)
    warnings = empty_value_warnings(warned_empty_values(ProductsBatch, body)) + unknown_member_warnings(opened.unknown)
    return CheckedProducts(warnings=warnings, products=products, groups=groups)


def save(
    storage: PutProductsStorage,
    partner_id: str,
    opened: Opened[ProductsBatch],
    checked: CheckedProducts,
    validate_only: bool,
) -> BatchOutcome:
    accepted = accept_opened(
        storage,
        partner_id,
        PRODUCTS,
        opened,
        len(checked.products),
        checked.warnings,
        validate_only,
    )
    if isinstance(accepted, NewBatch):
        return accepted.saved(storage.save_products(accepted.marker, checked.products, checked.groups))
    return accepted


def _store_currency_problems(products: list[Product], currencies: dict[str, str | None]) -> list[FieldProblem]:
    """A store-specific product is priced in its store's currency, once the store is known."""
    problems = []
    for index, product in enumerate(products):
        expected = None if product.store_id is None else currencies.get(product.store_id)
        if expected is not None and product.currency != expected:
            problems.append(
                FieldProblem(
                    f"products[{index}].currency", f"must equal the currency of store {product.store_id} ({expected})"
                )
            )
    return problems
