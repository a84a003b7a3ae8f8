"""The OpenAPI document says what the service accepts, from the same libraries and lists (decision 0100):
its enums are exactly the values the wire types take, a localized name counts its members, every enum has
a name of its own, and store-day writes link to the reads of that store-day."""

from __future__ import annotations

import json
import re
import zoneinfo

import pytest
from iso4217 import Currency
from pydantic import TypeAdapter, ValidationError

from core.settings import PROJECT_ROOT
from ingest.wire.scalars import MAX_NAME_LANGUAGES, CountryCode, CurrencyCode, LocalizedText, TimeZone
from reference.codes import TRANSACTION_TYPES, code_list

DOCUMENT = json.loads((PROJECT_ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
SCHEMAS = DOCUMENT["components"]["schemas"]


def accepts(kind, value) -> bool:
    try:
        TypeAdapter(kind).validate_python(value)
    except ValidationError:
        return False
    return True


def test_currency_enum_is_every_code_the_service_accepts():
    documented = SCHEMAS["CurrencyCode"]["enum"]
    assert {currency.value for currency in Currency if accepts(CurrencyCode, currency.value)} == set(documented)
    assert {"USD", "JPY", "CLF", "KWD"} <= set(documented) and "XXX" not in documented  # XXX: no minor units


def test_country_and_time_zone_enums_are_what_the_service_accepts():
    import pycountry

    assert set(SCHEMAS["CountryCode"]["enum"]) == {country.alpha_2 for country in pycountry.countries}
    assert all(accepts(CountryCode, code) for code in SCHEMAS["CountryCode"]["enum"])
    zones = SCHEMAS["TimeZone"]["enum"]
    assert all(accepts(TimeZone, zone) and zoneinfo.ZoneInfo(zone) for zone in zones)
    assert {"Asia/Tokyo", "America/Santiago", "UTC"} <= set(zones)
    assert not accepts(TimeZone, "localtime")  # a file of some machines' zoneinfo, not an IANA name


def test_a_localized_name_counts_its_languages_in_the_document_as_the_service_does():
    name = SCHEMAS["Product"]["properties"]["name"]
    assert (name["minProperties"], name["maxProperties"]) == (1, MAX_NAME_LANGUAGES)
    assert "minLength" not in name and "maxLength" not in name
    assert not accepts(LocalizedText, {})
    many = {f"x{chr(97 + i // 26)}{chr(97 + i % 26)}": "tea" for i in range(MAX_NAME_LANGUAGES + 1)}
    assert not accepts(LocalizedText, many)


def test_standard_code_lists_hqs_codes():
    entry = SCHEMAS["MappingEntry"]["properties"]["standard_code"]
    assert entry["$ref"] == "#/components/schemas/StandardTransactionType"
    codes = [item["code"] for item in code_list(TRANSACTION_TYPES).entries]
    assert SCHEMAS["StandardTransactionType"]["enum"] == codes
    assert "UNKNOWN_STANDARD_CODE" in entry["description"]


def _inline_enums(node, path: str, found: list[str]) -> list[str]:
    if isinstance(node, dict):
        if "enum" in node and path.count("/") > 1:
            found.append(path)
        for key, value in node.items():
            _inline_enums(value, f"{path}/{key}", found)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _inline_enums(value, f"{path}/{index}", found)
    return found


def test_every_enum_is_a_named_component():
    parameters = [op.get("parameters", []) for item in DOCUMENT["paths"].values() for op in item.values()]
    assert _inline_enums(SCHEMAS, "", []) == [] and _inline_enums(parameters, "/p/q", []) == []
    enums = [name for name, schema in SCHEMAS.items() if "enum" in schema]
    named = {"TradeStatus", "MasterStatus", "ReconciliationStatus", "BatchStatus", "HealthState", "CodeType"}
    assert named <= set(enums)
    assert not [name for name in SCHEMAS if re.search(r"[0-9]$", name)]


@pytest.mark.parametrize("write", ["post_trade_records", "post_daily_close"])
def test_a_store_day_write_links_to_the_store_days_reads(write):
    operation = next(op for item in DOCUMENT["paths"].values() for op in item.values() if op["operationId"] == write)
    for status in ("202", "200"):
        link = operation["responses"][status]["links"]["GetDailyClose"]
        assert link["operationId"] == "get_daily_close"
        assert link["parameters"] == {
            "store_id": "$request.body#/store_id",
            "business_date": "$request.body#/business_date",
        }
