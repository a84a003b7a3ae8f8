"""What the OpenAPI generator (triggers/openapi.py) adds to the document pydantic's schemas make
(decision 0100): every enum a named component, and links between operations.

- **Named enums.** pydantic writes a Literal inline, and code generators then name it after its property,
  numbered when several share a name (`Status1`..`Status5`). Each enum becomes a component with a name,
  referenced where it was: the name of its set of values when the set is one the interface names
  (`TradeStatus`, `CurrencyCode`...), else its schema's name and its property's (`HealthResponseStatus`), never
  a number.
- **Links** (OpenAPI 3.1 section 4.8.20), so that a stateful test, or a reader, follows a partner's day: a write
  of a store-day's data leads to every read of that store-day (an operation whose parameters are `store_id`
  and `business_date`), with the values of its request body; the mapping's write leads to its read.
"""

from __future__ import annotations

from typing import Any, get_args

from core.stored_json import JsonObject
from ingest.wire.requests import MappingEntry
from ingest.wire.responses import BatchResponse, DailyCloseStatus, HealthResponse, TransactionType
from ingest.wire.scalars import (
    MasterStatus,
    ProductType,
    TradeStatus,
    country_codes,
    currency_codes,
    standard_transaction_codes,
    time_zone_names,
)
from reference.codes import CODE_TYPES, code_list

STORE_DAY = ("store_id", "business_date")


def _literal(annotation: Any) -> tuple[Any, ...]:
    """The values of a Literal, also inside `Literal[...] | None`."""
    arguments = get_args(annotation)
    nested = [value for argument in arguments for value in get_args(argument)]
    return tuple(nested) if nested and all(not isinstance(a, (str, int)) for a in arguments) else arguments


def enum_names() -> dict[frozenset[object], str]:
    """The interface's names of its sets of values."""
    named = {
        "MasterStatus": get_args(MasterStatus),
        "ProductType": get_args(ProductType),
        "TradeStatus": get_args(TradeStatus),
        "TaxCategory": code_list("tax-categories").codes,
        "OrderType": code_list("order-types").codes,
        "PaymentMethod": code_list("payment-methods").codes,
        "CurrencyCode": currency_codes(),
        "CountryCode": country_codes(),
        "TimeZone": time_zone_names(),
        "StandardTransactionType": standard_transaction_codes(),
        "BatchStatus": _literal(BatchResponse.model_fields["status"].annotation),
        "ReconciliationStatus": _literal(DailyCloseStatus.model_fields["status"].annotation),
        "HealthState": _literal(HealthResponse.model_fields["status"].annotation),
        "AmountSign": _literal(TransactionType.model_fields["amount_sign"].annotation),
        "CodeType": CODE_TYPES,
    }
    assert MappingEntry.model_fields["standard_code"]  # the mapping's standard_code is StandardTransactionType
    return {frozenset(values): name for name, values in named.items()}


# What an enum component keeps of the schema it came from; the rest (its description, examples, default)
# stays where it was, beside the reference.
_ENUM_KEYWORDS = ("type", "enum")
_IMPLIED_BY_ENUM = ("title", "pattern", "minLength", "maxLength")


def name_enums(document: JsonObject) -> JsonObject:
    """Every inline enum of the schemas and parameters replaced by a reference to a named component."""
    schemas = document["components"]["schemas"]
    names = enum_names()
    found: dict[str, JsonObject] = {}

    def visit(node: Any, owner: str, property_name: str) -> Any:
        if isinstance(node, list):
            return [visit(item, owner, property_name) for item in node]
        if not isinstance(node, dict):
            return node
        if "enum" in node and "$ref" not in node:
            name = names.get(frozenset(node["enum"])) or owner + _pascal(node.get("title") or property_name)
            component = {key: node[key] for key in _ENUM_KEYWORDS if key in node}
            if found.setdefault(name, component) != component:
                raise ValueError(f"two enums named {name}: name them in triggers/openapi_refinements.py")
            kept = {key: value for key, value in node.items() if key not in _ENUM_KEYWORDS + _IMPLIED_BY_ENUM}
            return {"$ref": f"#/components/schemas/{name}", **kept}
        visited = {}
        for key, value in node.items():
            inner = key if key not in ("anyOf", "items", "additionalProperties", "schema") else property_name
            visited[key] = visit(value, owner, inner) if key != "properties" else _properties(value, owner)
        return visited

    def _properties(properties: JsonObject, owner: str) -> JsonObject:
        return {name: visit(schema, owner, name) for name, schema in properties.items()}

    for name in list(schemas):
        schemas[name] = visit(schemas[name], name, "")
    for item in document["paths"].values():
        for operation in item.values():
            for parameter in operation.get("parameters", ()):
                parameter["schema"] = visit(parameter["schema"], _pascal(operation["operationId"]), parameter["name"])
    for name, component in sorted(found.items()):
        if name in schemas:
            raise ValueError(f"an enum named {name} would replace the schema of that name")
        schemas[name] = {"title": name, **component}
    document["components"]["schemas"] = dict(sorted(schemas.items()))
    return document


def _pascal(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", "_").replace(" ", "_").split("_"))


def add_links(document: JsonObject) -> JsonObject:
    """Links from each write of a store-day's data to every read of a store-day, and from the mapping's write
    to its read, on the write's success answers."""
    operations = {op["operationId"]: (method, op) for item in document["paths"].values() for method, op in item.items()}
    reads = [
        name
        for name, (method, op) in operations.items()
        if method == "get" and set(STORE_DAY) <= {p["name"] for p in op.get("parameters", ())}
    ]
    schemas = document["components"]["schemas"]
    for name, (_, op) in operations.items():
        links: dict[str, JsonObject] = {}
        body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        model = schemas.get(str(body.get("$ref", "")).rsplit("/", 1)[-1], {})
        if set(STORE_DAY) <= set(model.get("required", ())):
            for read in reads:
                links[_pascal(read)] = {
                    "operationId": read,
                    "parameters": {parameter: f"$request.body#/{parameter}" for parameter in STORE_DAY},
                    "description": "The store-day this request wrote to.",
                }
        if name.startswith("put_") and f"get_{name[4:]}" in operations:
            links[_pascal(f"get_{name[4:]}")] = {"operationId": f"get_{name[4:]}", "description": "What was written."}
        for status in ("200", "202") if links else ():
            if status in op["responses"]:
                op["responses"][status]["links"] = links
    return document
