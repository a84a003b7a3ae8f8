"""Optional fields sent as "" and names up to their generous limits, over real HTTP (decision 0018).

Many POS exports and CSV-to-JSON converters write "no value" as "": an optional field reads it as absent,
stored exactly as an omitted field (so the totals are the same); a value of a given form (a timestamp, an
amount, a listed code, card_last4) sent as "" is also warned about. A required field still refuses "".
Both readers of POST /trade-records are shown: the one-parse fast path and the slow way (a body with a
member the service does not know always takes the slow way).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.e2e.test_business_day import DAY, open_store
from tests.payloads import error_paths, mapping_batch, product, products_batch, store, stores_batch
from tests.trade_payloads import Line, trade_batch, trade_record

FREE_STRINGS = ("order_source", "order_source_detail", "member_id", "employee_id", "fiscal_document_no")


def stored_document(partner, trade_record_id: str) -> dict:
    with sqlite3.connect(partner.host.data_dir / "pos.sqlite3") as db:
        (document,) = db.execute(
            "SELECT document FROM trade_records WHERE partner_id = ? AND trade_record_id = ?",
            (partner.partner_id, trade_record_id),
        ).fetchone()
    return json.loads(document)


def without_ids(document: dict) -> dict:
    document = {**document, "trade_record_id": None}
    document["payments"] = [{**payment, "payment_id": None} for payment in document["payments"]]
    return document


def record_with_empty_strings(slow: bool) -> dict:
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550, modifiers=[_modifier("")])])
    record.update(dict.fromkeys([*FREE_STRINGS, "original_trade_record_id"], ""))
    record["payments"][0].update(payment_method_detail="", original_payment_id="")
    if slow:
        record["pos_terminal"] = "T1"  # a member the service does not know: the slow way reads the body
    return record


def _modifier(option_name: str | None) -> dict:
    modifier = {"group_id": "G-CHEESE", "option_id": "O-CHEDDAR", "quantity": "1", "price_delta": "0.00"}
    if option_name is not None:
        modifier["option_name"] = option_name
    return modifier


@pytest.mark.parametrize("slow", [False, True], ids=["fast path", "slow way"])
def test_empty_free_strings_are_stored_as_omitted_ones(partner, slow):
    open_store(partner)
    sent = record_with_empty_strings(slow)
    omitted = trade_record("S1", DAY, [Line("P-BURGER", 1, 550, modifiers=[_modifier(None)])])
    del omitted["order_source"]
    response = partner.post("trade-records", trade_batch("S1", DAY, [sent, omitted]))
    assert response.status_code == 202, response.text
    codes = [warning["code"] for warning in response.json()["warnings"]]
    assert codes == (["UNKNOWN_MEMBER_IGNORED"] if slow else [])  # "" in a free string or code is no news
    assert without_ids(stored_document(partner, sent["trade_record_id"])) == without_ids(
        stored_document(partner, omitted["trade_record_id"])
    )
    assert stored_document(partner, sent["trade_record_id"])["member_id"] is None


@pytest.mark.parametrize("slow", [False, True], ids=["fast path", "slow way"])
def test_values_of_a_form_sent_as_empty_strings_are_absent_with_a_warning(partner, slow):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], closed_at="")
    record["items"][0]["tax_category"] = ""
    record["payments"][0].update(tip_amount="", card_last4="")
    if slow:
        record["pos_terminal"] = "T1"
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    assert response.status_code == 202, response.text
    warned = [(w["code"], w["path"], w.get("field")) for w in response.json()["warnings"]]
    assert [w for w in warned if w[0] == "EMPTY_VALUE_READ_AS_ABSENT"] == [
        ("EMPTY_VALUE_READ_AS_ABSENT", "trade_records[0]", "closed_at"),
        ("EMPTY_VALUE_READ_AS_ABSENT", "trade_records[0]", "items[0].tax_category"),
        ("EMPTY_VALUE_READ_AS_ABSENT", "trade_records[0]", "payments[0].tip_amount"),
        ("EMPTY_VALUE_READ_AS_ABSENT", "trade_records[0]", "payments[0].card_last4"),
    ]
    document = stored_document(partner, record["trade_record_id"])
    assert document["closed_at"] is None and document["payments"][0]["tip_amount"] is None


def test_a_required_field_still_refuses_an_empty_string(partner):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], employee_id="")
    record["items"][0]["product_name"] = ""
    record["payments"][0]["payment_id"] = ""
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    assert error_paths(response) == [
        "trade_records[0].items[0].product_name",
        "trade_records[0].payments[0].payment_id",
    ]


def test_products_and_mappings_read_empty_strings_as_absent(partner):
    open_store(partner)
    sent = product("P-TEA", sku="", category_id="", store_id="", effective_from="", tax_category="")
    response = partner.put("products", products_batch([sent]))
    assert response.status_code == 202, response.text
    assert [(w["code"], w["path"], w.get("field")) for w in response.json()["warnings"]] == [
        ("EMPTY_VALUE_READ_AS_ABSENT", "products[0]", "tax_category"),
        ("EMPTY_VALUE_READ_AS_ABSENT", "products[0]", "effective_from"),
    ]
    with sqlite3.connect(partner.host.data_dir / "pos.sqlite3") as db:
        store_key, document = db.execute(
            "SELECT store_key, document FROM products WHERE partner_id = ? AND product_id = 'P-TEA'",
            (partner.partner_id,),
        ).fetchone()
    stored = json.loads(document)
    assert stored["store_id"] is None and stored["sku"] is None and stored["effective_from"] is None
    mapping = mapping_batch(("01", "SALE"))
    mapping["mappings"][0]["source_name"] = ""
    response = partner.put("mappings/transaction-types", mapping)
    assert response.status_code == 202, response.text
    assert partner.get("mappings/transaction-types").json()["mappings"][0].get("source_name") is None


def test_names_up_to_a_thousand_characters(partner):
    name = ("抹茶ラテ（ホット）Ｍサイズ " * 72)[:1000]  # 1,000 characters, most of them 3 bytes in UTF-8
    assert len(name) == 1000
    assert partner.put("stores", stores_batch(store("S1", store_name=name))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    many_languages = {f"en-{region}": name for region in ("US", "GB", "AU", "CA", "NZ", "IE")}
    response = partner.put("products", products_batch([product("P-LONG", name=many_languages)]))
    assert response.status_code == 202, response.text
    record = trade_record("S1", DAY, [Line("P-LONG", 1, 550, modifiers=[_modifier(name)])])
    record["items"][0]["product_name"] = name
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    assert response.status_code == 202, response.text
    assert stored_document(partner, record["trade_record_id"])["items"][0]["product_name"] == name

    too_long = name + "x"
    refused = partner.put("stores", stores_batch(store("S1", store_name=too_long)))
    assert error_paths(refused) == ["stores[0].store_name"]
    record["items"][0]["product_name"] = too_long
    assert error_paths(partner.post("trade-records", trade_batch("S1", DAY, [record]))) == [
        "trade_records[0].items[0].product_name"
    ]


def test_a_language_left_empty_in_a_localized_name_is_read_as_absent(partner):
    open_store(partner)
    sent = product("P-TEA", name={"en-US": "Green tea", "zh-TW": "", "ja-JP": "緑茶"}, category_name="")
    sent["modifier_group_ids"] = []
    response = partner.put("products", products_batch([sent]))
    assert response.status_code == 202, response.text
    with sqlite3.connect(partner.host.data_dir / "pos.sqlite3") as db:
        (document,) = db.execute(
            "SELECT document FROM products WHERE partner_id = ? AND product_id = 'P-TEA'", (partner.partner_id,)
        ).fetchone()
    stored = json.loads(document)
    assert stored["name"] == {"en-US": "Green tea", "ja-JP": "緑茶"} and stored["category_name"] is None
    nameless = product("P-NONE", name={"zh-TW": ""})  # a name needs one language with text
    assert error_paths(partner.put("products", products_batch([nameless]))) == ["products[0].name"]
