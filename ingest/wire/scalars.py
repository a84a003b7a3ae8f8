"""The scalar types of the wire format, its limits, and `WireModel`, the configuration every model shares.

Types are strict, as the specification's wire format is: no string-to-number or number-to-string
coercion. Each string type says what it holds (a code, free text, a decimal number...).
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import re
import zoneinfo
from typing import TYPE_CHECKING, Annotated, Literal
from uuid import UUID

import langcodes
import pycountry
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from core.money import currency_exponent
from reference.codes import code_list

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
    return frozenset(zoneinfo.available_timezones())


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
    CODE = "code"  # the partner's codes and ids: system-generated keys, never scanned (docs/decisions.md)
    DECIMAL = "decimal number"  # amounts and quantities
    STANDARD = "standard form"  # checked against a standard: ISO and IANA codes, language tags, UUIDs, HH:mm


FREE_TEXT, CODE, DECIMAL, STANDARD = StringKind.FREE_TEXT, StringKind.CODE, StringKind.DECIMAL, StringKind.STANDARD


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
# 200 characters is a generous maximum where the specification sets none (docs/decisions.md).
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
Text = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=_PRINTABLE), FREE_TEXT]
FreeString50 = Annotated[str, StringConstraints(min_length=1, max_length=50, pattern=_PRINTABLE), FREE_TEXT]
# The patterns that refuse nothing but control characters and line separators (C0, DEL, C1, U+2028, U+2029;
# each with min_length 1): a body whose strings are known to hold none needs only the length
# (ingest/one_parse.py `may_hold_control_characters`).
CONTROL_CHARACTER_PATTERNS = frozenset({_CODE_PATTERN, _PRINTABLE})
CurrencyCode = Annotated[
    str, AfterValidator(_check_currency), STANDARD, Field(description="ISO 4217 code.", examples=["USD"])
]
CountryCode = Annotated[str, AfterValidator(_check_country), STANDARD, Field(description="ISO 3166-1 alpha-2 code.")]
TimeZone = Annotated[str, AfterValidator(_check_time_zone), STANDARD, Field(description="IANA time zone.")]
# The document gives the syntax of a tag (as the pattern of the object's keys); the validator also
# checks its subtags against the registry.
LanguageTag = Annotated[
    str,
    AfterValidator(_check_language_tag),
    STANDARD,
    Field(description="BCP 47 language tag.", json_schema_extra={"pattern": _TAG_SYNTAX.pattern}),
]
LocalizedText = Annotated[
    dict[LanguageTag, Text],
    Field(
        min_length=1,
        description="Text by BCP 47 language tag; at least one language.",
        json_schema_extra={"additionalProperties": False},
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


class WireModel(BaseModel):
    # Unknown fields are ignored so that partners can send fields added by later minor versions.
    model_config = ConfigDict(strict=True, extra="ignore")
