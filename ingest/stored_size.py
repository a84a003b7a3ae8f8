"""The most HQ stores in one item: a Cosmos DB item holds at most 2 MB (JSON as stored, properties of our
own and the service's included), and a transactional batch request carries at most 2 MB too. What one item
would hold beyond MAX_STORED_BYTES is refused with a clear problem on every backend alike, so that what the
embedded backend accepts, production accepts (decision 0013)."""

from __future__ import annotations

import orjson

from core.errors import FieldProblem
from core.records import ModifierGroupMaster, ProductMaster, TradeRecordRow

# Below 2 MB with room for the narrow fields a record item carries beside its document, and for a batch
# request's envelope around one item.
MAX_STORED_BYTES = 1_500_000


def oversized(path: str, size: int, what: str, advice: str) -> list[FieldProblem]:
    """A problem at `path` when `what` takes more than MAX_STORED_BYTES as stored (`size`, UTF-8 bytes)."""
    if size <= MAX_STORED_BYTES:
        return []
    return [
        FieldProblem(
            path,
            f"{what} takes {size / 1_000_000:.2f} MB as stored; HQ stores at most "
            f"{MAX_STORED_BYTES / 1_000_000:.1f} MB for one {what} (a Cosmos DB item holds 2 MB): {advice}",
        )
    ]


def oversized_records(rows: list[TradeRecordRow]) -> list[FieldProblem]:
    """A problem for each record of a batch whose stored document would be too large."""
    # A character is at least one UTF-8 byte: only a document that may be too large is encoded to be measured.
    return [
        problem
        for index, row in enumerate(rows)
        if len(row.document_json) > MAX_STORED_BYTES // 4
        for problem in oversized(
            f"trade_records[{index}]", len(row.document_json.encode()), "transaction", "ask HQ how to send it"
        )
    ]


def oversized_masters(products: list[ProductMaster], groups: list[ModifierGroupMaster]) -> list[FieldProblem]:
    """A problem for each product or modifier group whose stored document would be too large (a group of
    thousands of options with names in many languages can be)."""
    advice = "send fewer options or shorter names"
    problems = []
    for index, product in enumerate(products):
        problems += oversized(f"products[{index}]", len(orjson.dumps(product.document)), "product", advice)
    for index, group in enumerate(groups):
        problems += oversized(f"modifier_groups[{index}]", len(orjson.dumps(group.document)), "modifier group", advice)
    return problems
