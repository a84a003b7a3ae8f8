"""Codes are strings, as the specification types them (decision 0014).

Real POS systems write codes with slashes, hashes, spaces and their own scripts: Portuguese and Polish
fiscal document numbers ("FT A/123", "FV/2024/01/001"), the Canadian tax code "GST/HST", SKUs such as
"ABC/12-XL", payment numbers such as "#4411" or "R/2024/77". A whole business day of three stores
written that way is accepted, stored exactly, resent and reconciled MATCHED over real HTTP, on both
backends; only store_id, which travels in a URL path, keeps its documented restricted set.
(tests/contract/test_codes_storage.py holds the storage contract for such codes on both backends.)
"""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import TypeAdapter, ValidationError

from ingest.wire.scalars import MAX_CODE_LENGTH, MAX_STORE_ID_LENGTH, Code, StoreId
from tests.backend_storage import storage_of
from tests.conftest import make_partner
from tests.e2e.test_business_day import wait_for_result
from tests.payloads import error_paths, mapping_batch, product, products_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, daily_close, totals_of, trade_batch, trade_record

DAY = "2026-11-20"
DIRECTIONS = {"SALE": 1, "REFUND": -1}


# -- the types --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "FT A/123",
        "FV/2024/01/001",
        "GST/HST",
        "ABC/12-XL",
        "#4411",
        "R/2024/77",
        "a\\b?c#d",
        "50% off",
        "~|~",
        " leading",
        "trailing ",
        "  ",
        "inner  spaces",
        "發票 AB-12345678",
        "فاتورة ١٢٣",
        "ใบเสร็จ 001",
        "Чек №5",
        "🍔",
        "👨‍👩‍👧",
        "\u00a0NBSP\u3000",
        "\ue000 private use",
        "x" * MAX_CODE_LENGTH,
        "😀" * MAX_CODE_LENGTH,
    ],
)
def test_a_code_is_any_printable_text_kept_exactly_as_sent(code):
    assert TypeAdapter(Code).validate_python(code) == code


@pytest.mark.parametrize(
    "code",
    [
        "",
        "x" * (MAX_CODE_LENGTH + 1),
        "a\tb",
        "a\nb",
        "a\rb",
        "\x00",
        "a\x1bb",
        "a\x7fb",
        "a\x85b",
        "a\u2028b",
        "a\u2029b",
    ],
    ids=[
        "empty",
        "too-long",
        "tab",
        "newline",
        "return",
        "nul",
        "escape",
        "del",
        "c1-nel",
        "line-separator",
        "paragraph-separator",
    ],
)
def test_a_code_refuses_only_control_characters_and_what_is_too_long(code):
    with pytest.raises(ValidationError):
        TypeAdapter(Code).validate_python(code)


@pytest.mark.parametrize(
    "store_id, valid",
    [
        ("NYC-001", True),
        ("TOR 001", True),
        ("台北 01", True),
        ("a%2Fb", True),
        ("x" * MAX_STORE_ID_LENGTH, True),
        ("LIS/001", False),
        ("a\\b", False),
        ("a?b", False),
        ("a#b", False),
        ("a\tb", False),
        ("", False),
        ("x" * (MAX_STORE_ID_LENGTH + 1), False),
    ],
)
def test_store_id_keeps_its_restricted_set(store_id, valid):
    try:
        TypeAdapter(StoreId).validate_python(store_id)
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted is valid


def test_the_document_says_why_store_id_is_restricted_and_that_codes_are_not():
    import json

    from triggers.openapi_document import DOCUMENT

    document = json.loads(DOCUMENT.read_text(encoding="utf-8"))  # kept equal to the code by test_openapi.py
    (path_store_id, _) = document["paths"]["/daily-close/{store_id}/{business_date}"]["get"]["parameters"]
    assert path_store_id["schema"]["maxLength"] == MAX_STORE_ID_LENGTH
    assert "/ \\ ? #" in path_store_id["schema"]["description"]
    assert "path" in path_store_id["schema"]["description"]
    schemas = document["components"]["schemas"]
    payment_id = schemas["Payment"]["properties"]["payment_id"]
    assert payment_id["maxLength"] == MAX_CODE_LENGTH and "/" not in payment_id["pattern"]
    assert schemas["TradeRecord"]["properties"]["store_id"]["pattern"] == path_store_id["schema"]["pattern"]


# -- a business day written with real partners' codes, over HTTP on both backends -------------------

STORES = {
    # store_id: country, currency, time zone, locale, offset of opened_at
    "LIS-001": ("PT", "EUR", "Europe/Lisbon", "pt-PT", "+00:00"),
    "WAW-001": ("PL", "PLN", "Europe/Warsaw", "pl-PL", "+01:00"),
    "TOR 001": ("CA", "CAD", "America/Toronto", "en-CA", "-05:00"),
}
MAPPINGS = [
    ("FT/Venda", "SALE"),
    ("NC/Devolução", "REFUND"),
    ("FV/Sprzedaż #1", "SALE"),
    (" 01 ", "SALE"),
    ("01", "REFUND"),
]  # " 01 " and "01" are different codes: spaces are kept


@pytest.fixture
def partner(backend_host):
    return make_partner(backend_host, tuple(STORES))


def _open_stores(partner) -> None:
    stores = [
        store(store_id, country_code=country, currency=currency, time_zone=zone, locale=locale)
        for store_id, (country, currency, zone, locale, _) in STORES.items()
    ]
    assert partner.put("stores", stores_batch(*stores)).status_code == 202
    mapping = partner.put("mappings/transaction-types", mapping_batch(*MAPPINGS))
    assert mapping.status_code == 202, mapping.text


def _products() -> dict:
    size = {
        "group_id": "G/Tamanho #1",
        "name": {"pt-PT": "Tamanho"},
        "min_select": 0,
        "max_select": 1,
        "options": [
            {"option_id": "XL/Grande", "name": {"pt-PT": "Grande"}, "price_delta": "1.00"},
            {"option_id": "ABC/12-XL", "name": {"pt-PT": "Camisola XL"}, "price_delta": "0.00"},
        ],
    }
    shirt = product(
        "ABC/12-XL",
        sku="ABC/12-XL",
        name={"pt-PT": "Camisola XL"},
        category_id="Vestuário/Camisolas",
        currency="EUR",
        unit_price="10.00",
        modifier_group_ids=["G/Tamanho #1"],
        store_id="LIS-001",
    )
    kit = product(
        "KIT #2/Verão",
        name={"pt-PT": "Kit de verão"},
        currency="EUR",
        unit_price="15.00",
        product_type="COMBO",
        modifier_group_ids=[],
        store_id="LIS-001",
        combo_components=[
            {
                "product_id": "ABC/12-XL",
                "quantity": "1",
                "is_substitutable": True,
                "substitute_group_id": "G/Tamanho #1",
            }
        ],
    )
    coffee = product(
        "Kawa/Duża #3",
        name={"pl-PL": "Kawa duża"},
        currency="PLN",
        unit_price="12.00",
        modifier_group_ids=[],
        store_id="WAW-001",
    )
    poutine = product(
        "PTN / Large",
        name={"en-CA": "Poutine", "fr-CA": "Poutine"},
        currency="CAD",
        unit_price="9.00",
        modifier_group_ids=[],
        store_id="TOR 001",
    )
    return products_batch([shirt, kit, coffee, poutine], [size])


def _record(
    store_id: str,
    trade_record_id: str,
    lines: list[Line],
    *,
    source_type: str,
    tax: int,
    payment_ids: list[str],
    tax_code: str,
    tax_rate: str = "0.23",
    **changes,
) -> dict:
    country, currency, zone, locale, offset = STORES[store_id]
    body = trade_record(
        store_id,
        DAY,
        lines,
        currency=currency,
        source_type=source_type,
        tax=tax,
        trade_record_id=trade_record_id,
        opened_at=f"{DAY}T12:30:00{offset}",
        employee_id="EMP #07/B",
        **changes,
    )
    for payment, payment_id in zip(body["payments"], payment_ids, strict=True):
        payment["payment_id"] = payment_id
    subtotal = sum(line.amount for line in lines if line.parent_line_no is None)
    body["tax_lines"] = [
        {
            "tax_code": tax_code,
            "tax_rate": tax_rate,
            "taxable_amount": f"{subtotal / 100:.2f}",
            "tax_amount": f"{tax / 100:.2f}",
            "is_inclusive": False,
        }
    ]
    return body


def _day() -> dict[str, list[list[dict]]]:
    """The records of each store, batch by batch."""
    size_xl = [
        {
            "group_id": "G/Tamanho #1",
            "option_id": "XL/Grande",
            "option_name": "Grande",
            "quantity": "1",
            "price_delta": "1.00",
        }
    ]
    sale = _record(
        "LIS-001",
        "FT A/123",
        [Line("ABC/12-XL", 2, 1100, modifiers=size_xl)],
        source_type="FT/Venda",
        tax=506,
        payment_ids=["#4411"],
        tax_code="IVA/23%",
        fiscal_document_no="FT A/123",
    )
    corrected = _record(
        "LIS-001",
        "FT A/123",
        [Line("ABC/12-XL", 3, 1100, modifiers=size_xl)],
        source_type="FT/Venda",
        tax=759,
        payment_ids=["#4411"],
        tax_code="IVA/23%",
        fiscal_document_no="FT A/123",
        version=2,
        last_modified_at="2026-11-20T21:00:00Z",
    )
    refund = _record(
        "LIS-001",
        "NC A/7",
        [Line("ABC/12-XL", -1, 1000)],
        source_type="NC/Devolução",
        tax=-230,
        payment_ids=["#4411/R"],
        tax_code="IVA/23%",
        fiscal_document_no="NC A/7",
        original_trade_record_id="FT A/123",
    )
    refund["payments"][0]["original_payment_id"] = "#4411"
    kit = _record(
        "LIS-001",
        "FT A/124",
        [Line("KIT #2/Verão", 1, 1500, product_type="COMBO"), Line("ABC/12-XL", 1, 0, parent_line_no=1)],
        source_type="FT/Venda",
        tax=345,
        payment_ids=["#4412", "#4412/2"],
        tax_code="IVA/23%",
        payments=[Pay(1000, method="CASH"), Pay(845, method="CREDIT_CARD")],
    )
    polish = _record(
        "WAW-001",
        "FV/2024/01/001",
        [Line("Kawa/Duża #3", 2, 1200)],
        source_type="FV/Sprzedaż #1",
        tax=552,
        payment_ids=["R/2024/77"],
        tax_code="PTU A/23%",
        fiscal_document_no="FV/2024/01/001",
    )
    canadian = _record(
        "TOR 001",
        "TOR 001/0001 #A",
        [Line("PTN / Large", 1, 900)],
        source_type=" 01 ",
        tax=117,
        payment_ids=["TXN/0001 #A"],
        tax_code="GST/HST",
        tax_rate="0.13",
    )
    canadian_refund = _record(
        "TOR 001",
        "TOR 001/0002 #A",
        [Line("PTN / Large", -1, 900)],
        source_type="01",
        tax=-117,
        payment_ids=["TXN/0002 #A"],
        tax_code="GST/HST",
        tax_rate="0.13",
        original_trade_record_id="TOR 001/0001 #A",
    )
    return {
        "LIS-001": [[sale, refund], [corrected, kit]],
        "WAW-001": [[polish]],
        "TOR 001": [[canadian, canadian_refund]],
    }


def test_a_day_written_with_real_partners_codes_is_accepted_stored_resent_and_matches(partner):
    _open_stores(partner)
    accepted = partner.put("products", _products())
    assert accepted.status_code == 202 and accepted.json()["warnings"] == [], accepted.text
    day = _day()
    latest: dict[str, list[dict]] = {}
    for store_id, batches in day.items():
        for seq, records in enumerate(batches, start=1):
            body = trade_batch(store_id, DAY, records, seq)
            response = partner.post("trade-records", body)
            assert response.status_code == 202, response.text
            assert response.json()["warnings"] == [], response.json()
            resent = partner.post("trade-records", body)
            assert resent.status_code == 200 and resent.json()["status"] == "ALREADY_RECEIVED", resent.text
        by_id = {record["trade_record_id"]: record for batch in batches for record in batch}  # later versions last
        latest[store_id] = list(by_id.values())
        revenue = {code for code, standard in MAPPINGS if standard in ("SALE", "REFUND")}
        close = partner.post(
            "daily-close",
            daily_close(
                store_id,
                DAY,
                totals_of(latest[store_id], revenue, DIRECTIONS),
                batch_count=len(batches),
                currency=STORES[store_id][1],
            ),
        )
        assert close.status_code == 202, close.text

    storage = storage_of(partner.host)
    for store_id, records in latest.items():
        result = wait_for_result(partner, store_id, DAY, timeout=60)
        assert result["status"] == "MATCHED", result
        assert result["store_id"] == store_id
        codes = {record["source_transaction_type"] for record in records}
        assert result["details"]["mapped_source_codes"] == {code: dict(MAPPINGS)[code] for code in sorted(codes)}
        stored = {
            row.trade_record_id: row
            for row in storage.store_day_rows(partner.partner_id, store_id, dt.date.fromisoformat(DAY))
        }
        assert set(stored) == {record["trade_record_id"] for record in records}
    assert stored["TOR 001/0001 #A"].source_transaction_type == " 01 "  # kept exactly, spaces included

    mapping = partner.get("mappings/transaction-types").json()
    assert [(entry["source_code"], entry["standard_code"]) for entry in mapping["mappings"]] == MAPPINGS
    shirt = storage.get_product(partner.partner_id, "ABC/12-XL", "LIS-001")
    assert shirt.document["sku"] == "ABC/12-XL" and shirt.document["category_id"] == "Vestuário/Camisolas"
    assert (
        storage.get_product(partner.partner_id, "KIT #2/Verão", "LIS-001").document["combo_components"][0][
            "substitute_group_id"
        ]
        == "G/Tamanho #1"
    )
    assert storage.get_product(partner.partner_id, "ABC/12-XL", None) is None


# -- refusals: only control characters, too long, and store_id's set ------------------------------


@pytest.fixture
def shop(new_partner):
    shop = new_partner(stores=("S1",))
    assert shop.put("stores", stores_batch(store("S1"))).status_code == 202
    return shop


@pytest.mark.parametrize(
    "field, value",
    [
        ("trade_record_id", "x" * (MAX_CODE_LENGTH + 1)),
        ("fiscal_document_no", "FT A/123\n"),
        ("employee_id", "EMP\x0007"),
    ],
)
def test_a_code_too_long_or_with_a_control_character_is_refused_at_its_path(shop, field, value):
    body = trade_batch("S1", DAY, [trade_record("S1", DAY, [Line("P/1", 1, 100)], **{field: value})])
    response = shop.post("trade-records", body)
    assert error_paths(response) == [f"trade_records[0].{field}"]
    assert value not in response.text


def test_a_code_of_the_longest_length_with_slashes_is_accepted(shop):
    code = ("FT A/" + "9" * MAX_CODE_LENGTH)[:MAX_CODE_LENGTH]
    record = trade_record("S1", DAY, [Line(code, 1, 100)], trade_record_id=code, fiscal_document_no=code)
    response = shop.post("trade-records", trade_batch("S1", DAY, [record]))
    assert response.status_code == 202, response.text


@pytest.mark.parametrize("store_id", ["LIS/001", "LIS\\001", "LIS?001", "LIS#001"])
def test_a_store_id_outside_its_set_is_refused_in_a_body(shop, store_id):
    response = shop.put("stores", stores_batch(store(store_id)))
    assert error_paths(response) == ["stores[0].store_id"]


@pytest.mark.parametrize("path_store_id", ["LIS%5C001", "LIS%3F001", "LIS%23001", "x" * 101])
def test_a_store_id_outside_its_set_is_refused_in_the_path(shop, path_store_id):
    assert error_paths(shop.get(f"daily-close/{path_store_id}/{DAY}")) == ["store_id"]


def test_a_slash_never_reaches_store_id_from_the_path(shop):
    # A "/" splits the path (no such route); an encoded one stays "%2F" inside its segment, as the
    # Functions host (Kestrel) leaves it, so the store code "LIS%2F001" is simply not registered.
    assert shop.get(f"daily-close/LIS/001/{DAY}").json()["code"] == "NOT_FOUND"
    assert shop.get(f"daily-close/LIS%2F001/{DAY}").json()["code"] == "STORE_NOT_ALLOWED"


def test_a_store_id_with_spaces_and_other_scripts_travels_in_the_path(new_partner):
    shop = new_partner(stores=("台北 01",))
    response = shop.get(f"daily-close/台北 01/{DAY}")  # sent percent-encoded
    assert response.status_code == 200, response.text
    assert response.json()["store_id"] == "台北 01" and response.json()["status"] == "NOT_RECEIVED"


# -- HQ sees such codes as they were sent ---------------------------------------------------------


def test_hq_prints_such_codes_exactly(shop):
    records = [
        trade_record("S1", DAY, [Line("ABC/12-XL", 1, 100)], source_type=code, trade_record_id=f"T {code}")
        for code in ("FT/Venda #1", " 01", "A,B")
    ]
    assert shop.post("trade-records", trade_batch("S1", DAY, records)).status_code == 202
    totals = totals_of(records, set(), {"SALE": 1})
    assert shop.post("daily-close", daily_close("S1", DAY, totals)).status_code == 202
    assert wait_for_result(shop, "S1", DAY, timeout=60)["details"]["unmapped_source_codes"] == [
        " 01",
        "A,B",
        "FT/Venda #1",
    ]

    listed = shop.host.hq_in_process("reconcile", "list", shop.partner_id)
    assert listed.returncode == 0, listed.stderr
    assert 'unmapped " 01","A,B",FT/Venda #1' in listed.stdout
    shown = shop.host.hq_in_process("reconcile", "show", shop.partner_id, "S1", DAY)
    assert shown.returncode == 0, shown.stderr
    assert 'unmapped source codes (counted, but not as revenue): " 01", "A,B", FT/Venda #1' in shown.stdout
    assert "source codes counted as" not in shown.stdout  # none mapped
