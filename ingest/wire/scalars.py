"""The scalar types of the wire format, its limits, and `WireModel`, the configuration every model shares.

Types are strict, as the specification's wire format is: no string-to-number or number-to-string
coercion. Each string type says what it holds (a code, free text, a decimal number...).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import importlib.resources
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal
from uuid import UUID

import langcodes
import pycountry
from iso4217 import Currency
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from core.money import currency_exponent
from reference.codes import TRANSACTION_TYPES, code_list

BATCH_LIMIT = 500
# Batches of trade records per store and business date (batch_seq, batch_count). The specification
# gives no limit; reconciliation lists the missing batch_seqs up to batch_count, so an unbounded count
# (2**53 - 1 fits the wire format) would have it build a list no memory holds. 100,000 batches is a
# store-day of 100,000 transactions sent one by one.
MAX_BATCHES_PER_DAY = 100_000
# Integers stay within I-JSON's exact range (RFC 7493): larger ones are not exact in many JSON
# parsers, and would overflow the 64-bit integers of storage (a 500 instead of a 400).
MAX_SAFE_INT = 2**53 - 1


# --- scalar types -------------------------------------------------------------------------------


def _check_currency(code: str) -> str:
    if currency_exponent(code) is None:
        raise ValueError("must be an ISO 4217 currency code with minor units, such as USD or JPY")
    return code


def _check_country(code: str) -> str:
    if len(code) != 2 or not code.isupper() or pycountry.countries.get(alpha_2=code) is None:
        raise ValueError("must be an ISO 3166-1 alpha-2 country code, such as US or TW")
    return code


@functools.cache
def _time_zones() -> frozenset[str]:
    """The IANA names of the pinned tzdata package (not the machine's zoneinfo, which adds names such as
    "localtime" and differs between hosts): the same set here, in Azure and in the document's enum."""
    return frozenset(importlib.resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split())


def _check_time_zone(name: str) -> str:
    if name not in _time_zones():
        raise ValueError("must be an IANA time zone, such as America/New_York")
    return name


_TAG_SYNTAX = re.compile(r"^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$")


def _check_language_tag(tag: str) -> str:
    if not _TAG_SYNTAX.match(tag) or not langcodes.tag_is_valid(tag):
        raise ValueError("must be a BCP 47 language tag, such as en-US or zh-TW")
    return tag


class StringKind(enum.Enum):
    """What a string type of the wire format holds, declared in its Annotated metadata. Every string
    field of a request is one of these (a test checks it), or an enum (Literal). Only free text is
    scanned for card numbers (ingest/data_protection.py): a person may type anything there."""

    FREE_TEXT = "free text"  # names, order sources, payment types and details, member_id
    CODE = "code"  # the partner's codes and ids: system-generated keys, never scanned (decision 0014)
    DECIMAL = "decimal number"  # amounts and quantities
    STANDARD = "standard form"  # checked against a standard: ISO and IANA codes, language tags, UUIDs, HH:mm


FREE_TEXT, CODE, DECIMAL, STANDARD = StringKind.FREE_TEXT, StringKind.CODE, StringKind.DECIMAL, StringKind.STANDARD


def standard_transaction_codes() -> list[str]:
    return [entry["code"] for entry in code_list(TRANSACTION_TYPES).entries]


# The document lists what the validators accept, from the same libraries and lists (decision 0100); computed
# only when the document is generated, never when the app starts.
def _enum_of(values: Callable[[], list[str]]) -> Callable[[dict[str, Any]], None]:
    def extend(schema: dict[str, Any]) -> None:
        schema["enum"] = values()

    return extend


# Integers are JSON integers: 2, not 2.0 or 2e0 (strict, like every type here), within I-JSON's exact
# range. JSON Schema cannot say "written without a fraction", so the document's descriptions do.
INTEGER_DESCRIPTION = "An integer written without a fraction or an exponent (2, not 2.0)."
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INT, description=INTEGER_DESCRIPTION)]
PositiveInteger = Annotated[int, Field(ge=1, le=MAX_SAFE_INT, description=INTEGER_DESCRIPTION)]


# [0-9], not \d: the pattern engine's \d also matches other scripts' digits (such as "٥"), which
# int() would then read as a number.
DecimalString = Annotated[
    str,
    StringConstraints(pattern=r"^-?[0-9]{1,15}(\.[0-9]{1,8})?$"),
    DECIMAL,
    Field(description='Decimal number as a JSON string, for example "2" or "0.5".'),
]
Money = Annotated[
    str,
    StringConstraints(pattern=r"^-?[0-9]{1,15}(\.[0-9]{1,8})?$"),
    DECIMAL,
    Field(
        description="Amount as a decimal string with exactly the currency's minor-unit places "
        '(USD "12.50", JPY "1200").'
    ),
]
# Codes and ids (product_id, payment_id, fiscal_document_no, tax_code, ...). The specification types
# them as plain strings with no length, and real systems write them with any character: "FT A/123",
# "FV/2024/01/001", "GST/HST", "#4411", "ABC/12-XL", non-Latin scripts. So a code is any printable text,
# kept exactly as sent (spaces around it too: they are part of the partner's key), only without control
# characters (C0, DEL, C1) and line or paragraph separators, which are never part of a code and would
# break HQ's tables and logs. Storage escapes what its keys cannot hold (backends/cosmos/keys.py).
# 200 characters is a generous maximum where the specification sets none (decision 0014).
MAX_CODE_LENGTH = 200
_CODE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]+$"
Code = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_CODE_LENGTH, pattern=_CODE_PATTERN),
    CODE,
    Field(
        description=f"Code of 1 to {MAX_CODE_LENGTH} characters: any printable text, kept exactly as sent "
        "(spaces included); no control characters or line separators."
    ),
]
# A mapping's standard_code: a code, checked against HQ's list by the use case (400 UNKNOWN_STANDARD_CODE, the
# specification's own code for it), and listed in the document.
StandardCode = Annotated[
    Code,
    Field(
        description="One of HQ's standard transaction types (GET /reference/transaction-types); another "
        "code is 400 UNKNOWN_STANDARD_CODE.",
        json_schema_extra=_enum_of(standard_transaction_codes),
    ),
]
# store_id alone travels in a URL path (GET /daily-close/{store_id}/{business_date}), where "/" splits
# the path, "?" and "#" end it, and some clients and proxies read a backslash as "/": it keeps a
# restricted set.
MAX_STORE_ID_LENGTH = 100
_STORE_ID_PATTERN = r"^[^/\\?#\x00-\x1f\x7f-\x9f\u2028\u2029]+$"
StoreId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_STORE_ID_LENGTH, pattern=_STORE_ID_PATTERN),
    CODE,
    Field(
        description=f"Store code of 1 to {MAX_STORE_ID_LENGTH} characters, without / \\ ? # or control "
        "characters: it travels in the path of GET /daily-close/{store_id}/{business_date}."
    ),
]
# Names and free strings: any text but control characters (tab and line breaks aside). A NUL or an
# escape sequence is never POS data, and would reach HQ's reports and terminals as it is.
_PRINTABLE = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+$"
# Names (store_name, product_name, option and source names, every language of a localized name). The
# specification sets no length; 1,000 characters is five times the longest real name we know of (a product
# name with its barcode, size and allergens), and a localized name of at most 50 languages keeps a product's
# names under 400 KB even in 4-byte characters, far below Cosmos DB's 2 MB item (decision 0018).
MAX_NAME_LENGTH = 1000
MAX_NAME_LANGUAGES = 50
Text = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_NAME_LENGTH, pattern=_PRINTABLE),
    FREE_TEXT,
]
FreeString50 = Annotated[str, StringConstraints(min_length=1, max_length=50, pattern=_PRINTABLE), FREE_TEXT]
# The patterns that refuse nothing but control characters and line separators (C0, DEL, C1, U+2028, U+2029;
# each with min_length 1): a body whose strings are known to hold none needs only the length
# (ingest/one_parse.py `may_hold_control_characters`).
CONTROL_CHARACTER_PATTERNS = frozenset({_CODE_PATTERN, _PRINTABLE})


def currency_codes() -> list[str]:
    return sorted(currency.value for currency in Currency if currency_exponent(currency.value) is not None)


def country_codes() -> list[str]:
    return sorted(country.alpha_2 for country in pycountry.countries)


def time_zone_names() -> list[str]:
    return sorted(_time_zones())


CurrencyCode = Annotated[
    str,
    AfterValidator(_check_currency),
    STANDARD,
    Field(description="ISO 4217 code.", examples=["USD"], json_schema_extra=_enum_of(currency_codes)),
]
CountryCode = Annotated[
    str,
    AfterValidator(_check_country),
    STANDARD,
    Field(description="ISO 3166-1 alpha-2 code.", json_schema_extra=_enum_of(country_codes)),
]
TimeZone = Annotated[
    str,
    AfterValidator(_check_time_zone),
    STANDARD,
    Field(description="IANA time zone (tzdata).", json_schema_extra=_enum_of(time_zone_names)),
]
# The document gives the syntax of a tag (as the pattern of the object's keys); the validator also
# checks its subtags against the registry.
LanguageTag = Annotated[
    str,
    AfterValidator(_check_language_tag),
    STANDARD,
    Field(description="BCP 47 language tag.", json_schema_extra={"pattern": _TAG_SYNTAX.pattern}),
]


def _without_empty_languages(value: Any) -> Any:
    """A language sent with "" (a translation the POS export left empty) is read as absent: the name keeps
    the others, and one with none left is refused as a name without a language."""
    if isinstance(value, dict) and "" in value.values():
        return {tag: text for tag, text in value.items() if text != ""}
    return value


def _counted_members(schema: dict[str, Any]) -> None:
    """An object's count of members is minProperties/maxProperties in JSON Schema: pydantic writes the
    dict's min_length and max_length as minLength/maxLength, which no validator applies to an object."""
    schema["additionalProperties"] = False
    schema["minProperties"] = schema.pop("minLength")
    schema["maxProperties"] = schema.pop("maxLength")


LocalizedText = Annotated[
    dict[LanguageTag, Text],
    BeforeValidator(_without_empty_languages),
    Field(
        min_length=1,
        max_length=MAX_NAME_LANGUAGES,
        description=f"Text by BCP 47 language tag; 1 to {MAX_NAME_LANGUAGES} languages, each of 1 to "
        f"{MAX_NAME_LENGTH} characters.",
        json_schema_extra=_counted_members,
    ),
]
# Timestamps are turned into UTC, store local time and epoch microseconds: a year of headroom at both
# ends of the datetime range keeps every conversion in range (otherwise a 500, not a 400). The bounds
# are compared in pydantic-core, offsets included, with no Python call per timestamp.
Timestamp = Annotated[
    AwareDatetime,
    Field(
        ge=dt.datetime(2, 1, 1, tzinfo=dt.UTC),
        lt=dt.datetime(9999, 1, 1, tzinfo=dt.UTC),
        description="Date-time with a UTC offset (RFC 3339).",
    ),
]
ClockTime = Annotated[
    str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$"), STANDARD, Field(description="HH:mm")
]
# The last four digits of a payment card, the most of a card number a partner may send.
CardLast4 = Annotated[str, StringConstraints(pattern=r"^[0-9]{4}$"), STANDARD]
# A batch_id is kept as the partner wrote it, to be echoed exactly (spec 1: "Echo of the request
# batch_id"); markers compare its canonical form (`WriteBatch.batch_key`). pydantic-core's UUID parser
# decides what is a UUID, so the forms accepted stay those accepted before the echo: 8-4-4-4-12 hex
# digits, also 32 without hyphens, in braces or after "urn:uuid:", in any case. One call per batch.
_UUID = TypeAdapter(UUID)
UUID_EXAMPLE = "3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01"


def _check_uuid(text: str) -> str:
    try:
        _UUID.validate_python(text)
    except ValidationError:
        raise ValueError(f'must be a UUID string such as "{UUID_EXAMPLE}"') from None
    return text


BatchId = Annotated[
    str,
    AfterValidator(_check_uuid),
    STANDARD,
    Field(
        description=f"Idempotency key of the batch: a UUID (RFC 9562), for example {UUID_EXAMPLE}; "
        "also accepted without hyphens, in braces or after urn:uuid:. The response "
        "echoes it exactly as sent. Two batch_ids are the same batch when they are "
        "the same UUID, in any case or form.",
        json_schema_extra={"format": "uuid"},
    ),
]
MasterStatus = Literal["ACTIVE", "INACTIVE"]
ProductType = Literal["SINGLE", "COMBO", "SIDE", "DRINK", "MODIFIER"]
if TYPE_CHECKING:  # the codes are read from reference/data when the app starts: text to a type checker
    TaxCategory = str
    OrderType = str
    PaymentMethod = str
else:
    TaxCategory = Literal[code_list("tax-categories").codes]
    OrderType = Literal[code_list("order-types").codes]
    PaymentMethod = Literal[code_list("payment-methods").codes]
TradeStatus = Literal["OPEN", "COMPLETED", "VOIDED", "REFUNDED", "PARTIALLY_REFUNDED"]


# --- optional fields sent as "" --------------------------------------------------------------------
# Many POS exports and CSV-to-JSON converters write "no value" as "". An optional string field reads it as
# absent: the same stored value, the same totals and the same checks as an omitted field (a required field
# still refuses it: the specification requires a value). Where the specification gives the string a form
# ("" is then no value of it: a timestamp, an amount, a code of a list, card_last4), the answer also warns
# (EMPTY_VALUE_READ_AS_ABSENT, ingest/batches.py), as the partner's export is then likely to write "" where
# it meant to write a value. Free strings and codes read "" as absent without a word: that is what "" means
# in them (decision 0018).


# The branches of the union an optional field reads, as they appear in pydantic's error locations: the
# parsers drop the errors of the "" branch and this tag of the value's (ingest/parsing.py `problems_of`).
VALUE_BRANCH, EMPTY_BRANCH = "[value]", "[empty]"


@dataclasses.dataclass(frozen=True)
class EmptyAsAbsent:
    """Annotated metadata of an optional field `X | None`: "" is read as None (`warned`: with a warning).
    A union of the field's type and "", then "" made None: a validator before the type would hand it a
    Python value, which a strict timestamp refuses as text. The fast path's Structs read "" as absent in
    the fields not warned about (ingest/wire/record_structs.py) and leave the others to the slow way."""

    warned: bool = False

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        either = core_schema.union_schema(
            [(handler(source), VALUE_BRANCH), (core_schema.str_schema(max_length=0, strict=True), EMPTY_BRANCH)],
            mode="left_to_right",
        )
        return core_schema.no_info_after_validator_function(_empty_as_none, either)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["description"] = (
            json_schema.get("description", "") + ' An empty string ("") is read as absent (null).'
        ).strip()
        return json_schema


def _empty_as_none(value: Any) -> Any:
    return None if value == "" else value


ABSENT_WHEN_EMPTY = EmptyAsAbsent()
WARNED_WHEN_EMPTY = EmptyAsAbsent(warned=True)


class WireModel(BaseModel):
    # Unknown fields are ignored so that partners can send fields added by later minor versions.
    model_config = ConfigDict(strict=True, extra="ignore")
