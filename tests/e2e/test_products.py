"""PUT /products over real HTTP: products, combos and modifier groups (spec 2, 4.6)."""

import json

import pytest

from tests.payloads import (
    DELETE,
    batch_id,
    changed,
    combo,
    error_paths,
    modifier_group,
    problem_of,
    product,
    products_batch,
    store,
    stores_batch,
)

REQUIRED = ("product_id", "name", "unit_price", "currency", "status", "version", "last_modified_at", "product_type")


def stored_groups(partner) -> dict[str, dict]:
    rows = partner.host.query("SELECT group_id, document FROM modifier_groups WHERE partner_id = ?", partner.partner_id)
    return {group_id: json.loads(document) for group_id, document in rows}


def test_accepts_products_combos_and_groups(partner):
    body = products_batch(
        [product("P-BURGER"), product("P-FRIES", modifier_group_ids=[]), combo("P-COMBO")],
        [modifier_group("G-CHEESE"), modifier_group("G-DRINKS")],
    )
    response = partner.put("products", body)
    assert response.status_code == 202, response.text
    assert response.json() == {"batch_id": body["batch_id"], "status": "ACCEPTED", "record_count": 3, "warnings": []}
    stored = partner.host.storage().get_product(partner.partner_id, "P-COMBO", None)
    assert stored.version == 1
    assert stored.document["combo_components"][2]["substitute_group_id"] == "G-DRINKS"
    assert stored.document["name"] == {"en-US": "Burger combo"}
    assert set(stored_groups(partner)) == {"G-CHEESE", "G-DRINKS"}


def test_only_modifier_groups_with_no_products(partner):
    response = partner.put("products", products_batch([], [modifier_group("G-CHEESE")]))
    assert response.status_code == 202, response.text
    assert response.json()["record_count"] == 0
    assert stored_groups(partner)["G-CHEESE"]["options"][0]["option_id"] == "O-CHEDDAR"


def test_modifier_groups_are_upserted_by_group_id(partner):
    assert partner.put("products", products_batch([], [modifier_group("G-CHEESE")])).status_code == 202
    renamed = modifier_group("G-CHEESE", name={"en-US": "Cheese, please"}, max_select=1)
    assert partner.put("products", products_batch([], [renamed])).status_code == 202
    group = stored_groups(partner)["G-CHEESE"]
    assert (group["name"], group["max_select"]) == ({"en-US": "Cheese, please"}, 1)


def test_products_without_the_optional_fields(partner):
    bare = {key: value for key, value in product("P-WATER").items() if key in REQUIRED}
    response = partner.put("products", products_batch([bare]))
    assert response.status_code == 202, response.text
    stored = partner.host.storage().get_product(partner.partner_id, "P-WATER", None)
    assert stored.document["store_id"] is None and stored.document["combo_components"] == []


@pytest.mark.parametrize("field", REQUIRED)
def test_a_missing_required_field_is_reported_at_its_path(partner, field):
    body = changed(products_batch([product()]), f"products.0.{field}", DELETE)
    assert error_paths(partner.put("products", body)) == [f"products[0].{field}"]


def test_the_products_list_is_required_even_when_empty(partner):
    body = {"batch_id": batch_id(), "modifier_groups": [modifier_group()]}
    assert error_paths(partner.put("products", body)) == ["products"]


# --- money: decimal strings with the currency's places -------------------------------------------


@pytest.mark.parametrize(
    "currency, price",
    [("USD", "5.50"), ("USD", "0.00"), ("USD", "1234567.89"), ("JPY", "1200"), ("JPY", "0"), ("BHD", "1.250")],
)
def test_a_price_with_the_currency_places_is_accepted(partner, currency, price):
    response = partner.put("products", products_batch([product(unit_price=price, currency=currency)]))
    assert response.status_code == 202, response.text
    assert partner.host.storage().get_product(partner.partner_id, "P-BURGER", None).document["unit_price"] == price


@pytest.mark.parametrize(
    "currency, price",
    [
        ("USD", "5.5"),
        ("USD", "5.500"),
        ("USD", "5"),  # USD has exactly 2 places
        ("JPY", "1200.00"),
        ("JPY", "1200.5"),  # JPY has none
        ("BHD", "1.25"),  # BHD has 3
    ],
)
def test_a_price_with_other_places_is_invalid(partner, currency, price):
    response = partner.put("products", products_batch([product(unit_price=price, currency=currency)]))
    assert error_paths(response) == ["products[0].unit_price"]
    assert currency in response.json()["errors"][0]["message"]


@pytest.mark.parametrize(
    "price", [5.5, 5, "5.", ".50", "5,50", "+5.50", " 5.50", "1e2", "five", "\u0665.\u0665\u0660"]
)  # Arabic-Indic digits
def test_a_price_that_is_not_a_decimal_string_is_invalid(partner, price):
    response = partner.put("products", products_batch([product(unit_price=price)]))
    assert error_paths(response) == ["products[0].unit_price"]
    assert partner.host.storage().get_product(partner.partner_id, "P-BURGER", None) is None


@pytest.mark.parametrize("currency", ["usd", "US", "XXX", "ABC", 840])
def test_a_currency_that_is_not_iso_4217_is_invalid(partner, currency):
    # The price's places cannot be judged without a currency: only the currency is reported.
    response = partner.put("products", products_batch([product(currency=currency)]))
    assert error_paths(response) == ["products[0].currency"]


def test_a_store_specific_product_is_priced_in_its_store_currency(partner):
    assert partner.put("stores", stores_batch(store("S1", currency="USD"))).status_code == 202
    in_yen = product(store_id="S1", currency="JPY", unit_price="600")
    assert error_paths(partner.put("products", products_batch([in_yen]))) == ["products[0].currency"]
    assert partner.put("products", products_batch([product(store_id="S1")])).status_code == 202


# --- types, enums and texts ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("version", "1"),  # a string where an integer is required
        ("version", 1.0),
        ("version", True),
        ("version", -1),
        ("version", 2**53),  # beyond what JSON parsers hold exactly
        ("version", 2**64),
        ("product_id", 7),
        ("store_id", "S1/A"),  # "" is absent (all stores), decision 0018
        ("status", "DELETED"),
        ("status", "active"),
        ("product_type", "BUNDLE"),
        ("tax_category", "LUXURY"),
        ("modifier_group_ids", "G-CHEESE"),
        ("combo_components", {}),
        ("effective_from", "2026-11-01T09:00:00"),  # no UTC offset
        ("last_modified_at", "2026-11-01 09:00"),
        ("last_modified_at", 1762000000),
        ("last_modified_at", "9999-12-31T23:59:59-01:00"),  # after year 9999 in UTC
        ("effective_from", "0001-01-01T00:00:00+01:00"),  # before year 1 in UTC
    ],
)
def test_an_invalid_value_is_reported_at_its_path(partner, field, value):
    response = partner.put("products", products_batch([product(**{field: value})]))
    assert error_paths(response) == [f"products[0].{field}"], response.text


def test_the_largest_exact_version_is_accepted(partner):
    response = partner.put("products", products_batch([product(version=2**53 - 1)]))
    assert response.status_code == 202, response.text
    assert partner.host.storage().get_product(partner.partner_id, "P-BURGER", None).version == 2**53 - 1


@pytest.mark.parametrize(
    "field, value, path",
    [
        ("name", {}, "products[0].name"),
        ("name", {"en-US": ""}, "products[0].name"),  # its only language left empty: no language
        ("name", {"en_US": "Cheeseburger"}, "products[0].name.en_US"),
        ("name", {"english": "Cheeseburger"}, "products[0].name.english"),
        ("name", {"en-US": 5}, "products[0].name.en-US"),
        ("name", "Cheeseburger", "products[0].name"),
        ("category_name", {}, "products[0].category_name"),
        ("category_name", {"zh_TW": "漢堡"}, "products[0].category_name.zh_TW"),
    ],
)
def test_localized_text_needs_a_language_tag_and_a_text(partner, field, value, path):
    assert error_paths(partner.put("products", products_batch([product(**{field: value})]))) == [path]


def test_localized_text_in_several_languages_is_kept(partner):
    name = {"en-US": "Cheeseburger", "zh-TW": "起司漢堡", "ja": "チーズバーガー", "zh-Hant-TW": "起司漢堡"}
    assert partner.put("products", products_batch([product(name=name)])).status_code == 202
    assert partner.host.storage().get_product(partner.partner_id, "P-BURGER", None).document["name"] == name


@pytest.mark.parametrize("tax_category", ["STANDARD", "REDUCED", "ZERO", "EXEMPT"])
def test_every_tax_category_of_the_spec_is_accepted(partner, tax_category):
    assert partner.put("products", products_batch([product(tax_category=tax_category)])).status_code == 202


@pytest.mark.parametrize("product_type", ["SINGLE", "COMBO", "SIDE", "DRINK", "MODIFIER"])
def test_every_product_type_of_the_spec_is_accepted(partner, product_type):
    assert partner.put("products", products_batch([product(product_type=product_type)])).status_code == 202


# --- combos -------------------------------------------------------------------------------------


def test_a_substitutable_component_needs_its_substitute_group(partner):
    body = changed(products_batch([combo()]), "products.0.combo_components.2.substitute_group_id", DELETE)
    assert error_paths(partner.put("products", body)) == ["products[0].combo_components[2].substitute_group_id"]
    body = changed(products_batch([combo()]), "products.0.combo_components.2.substitute_group_id", None)
    assert error_paths(partner.put("products", body)) == ["products[0].combo_components[2].substitute_group_id"]


def test_a_fixed_component_needs_no_substitute_group(partner):
    body = changed(products_batch([combo()]), "products.0.combo_components.2.is_substitutable", False)
    body = changed(body, "products.0.combo_components.2.substitute_group_id", DELETE)
    assert partner.put("products", body).status_code == 202


@pytest.mark.parametrize(
    "field, value",
    [
        ("quantity", 1),  # a JSON number where a decimal string is required
        ("quantity", "one"),
        ("is_substitutable", "true"),  # a string where a boolean is required
        ("is_substitutable", 1),
        ("product_id", None),
    ],
)
def test_an_invalid_component_is_reported_at_its_path(partner, field, value):
    body = changed(products_batch([combo()]), f"products.0.combo_components.1.{field}", value)
    assert error_paths(partner.put("products", body)) == [f"products[0].combo_components[1].{field}"]


def test_a_component_quantity_may_have_any_places(partner):
    body = changed(products_batch([combo()]), "products.0.combo_components.1.quantity", "0.5")
    assert partner.put("products", body).status_code == 202


def test_only_a_combo_has_components(partner):
    single_with_parts = combo(product_type="SINGLE")
    assert error_paths(partner.put("products", products_batch([single_with_parts]))) == ["products[0].combo_components"]


# --- modifier groups ----------------------------------------------------------------------------


def test_max_select_below_min_select_is_invalid(partner):
    body = products_batch([], [modifier_group(min_select=2, max_select=1)])
    assert error_paths(partner.put("products", body)) == ["modifier_groups[0].max_select"]


def test_max_select_equal_to_min_select_is_accepted(partner):
    assert partner.put("products", products_batch([], [modifier_group(min_select=1, max_select=1)])).status_code == 202


def test_a_group_needs_at_least_one_option(partner):
    body = products_batch([], [modifier_group(options=[])])
    assert error_paths(partner.put("products", body)) == ["modifier_groups[0].options"]


@pytest.mark.parametrize(
    "field, value, path",
    [
        ("min_select", "0", "modifier_groups[0].min_select"),  # a string where an integer is required
        ("min_select", -1, "modifier_groups[0].min_select"),
        ("max_select", 2.0, "modifier_groups[0].max_select"),
        ("max_select", 2**64, "modifier_groups[0].max_select"),
        ("name", {}, "modifier_groups[0].name"),
        ("name", {"EN US": "Cheese"}, "modifier_groups[0].name.EN US"),
        ("group_id", None, "modifier_groups[0].group_id"),
        ("options", "O-CHEDDAR", "modifier_groups[0].options"),
    ],
)
def test_an_invalid_group_is_reported_at_its_path(partner, field, value, path):
    body = products_batch([], [modifier_group(**{field: value})])
    assert error_paths(partner.put("products", body)) == [path]


@pytest.mark.parametrize(
    "field, value",
    [
        ("price_delta", 0.5),  # a JSON number where a decimal string is required
        ("price_delta", "half"),
        ("is_default", "true"),  # a string where a boolean is required
        ("is_default", 0),
        ("name", {"en-US": ""}),  # its only language left empty: a name without a language
        ("option_id", ""),
    ],
)
def test_an_invalid_option_is_reported_at_its_path(partner, field, value):
    body = changed(products_batch([], [modifier_group()]), f"modifier_groups.0.options.1.{field}", value)
    paths = error_paths(partner.put("products", body))
    assert paths == [f"modifier_groups[0].options[1].{field}"]


def test_a_duplicate_option_id_is_invalid(partner):
    body = changed(products_batch([], [modifier_group()]), "modifier_groups.0.options.1.option_id", "O-CHEDDAR")
    assert error_paths(partner.put("products", body)) == ["modifier_groups[0].options[1].option_id"]


def test_a_duplicate_group_id_is_invalid(partner):
    body = products_batch([], [modifier_group("G-1"), modifier_group("G-2"), modifier_group("G-1")])
    assert error_paths(partner.put("products", body)) == ["modifier_groups[2].group_id"]
    assert stored_groups(partner) == {}


# --- duplicates, several problems, batch size ---------------------------------------------------


def test_a_duplicate_product_id_is_invalid(partner):
    body = products_batch([product("P-1"), product("P-2"), product("P-1", unit_price="6.00")])
    response = partner.put("products", body)
    assert error_paths(response) == ["products[2].product_id"]
    assert "products[0]" in response.json()["errors"][0]["message"]


def test_one_product_id_may_have_a_general_and_a_store_specific_price(partner):
    body = products_batch([product("P-1", unit_price="5.50"), product("P-1", store_id="S1", unit_price="4.99")])
    assert partner.put("products", body).status_code == 202
    storage = partner.host.storage()
    assert storage.get_product(partner.partner_id, "P-1", None).document["unit_price"] == "5.50"
    assert storage.get_product(partner.partner_id, "P-1", "S1").document["unit_price"] == "4.99"


def test_every_type_problem_of_the_request_is_listed(partner):
    body = products_batch(
        [product("P-1", version="2"), product("P-2"), product("P-3", status="GONE", unit_price=3)],
        [modifier_group(options=[])],
    )
    response = partner.put("products", body)
    assert sorted(error_paths(response)) == [
        "modifier_groups[0].options",
        "products[0].version",
        "products[2].status",
        "products[2].unit_price",
    ]
    assert "4 problems" in response.json()["detail"]


def test_every_rule_problem_of_the_request_is_listed(partner):
    broken_combo = changed(combo("P-C"), "combo_components.2.substitute_group_id", DELETE)
    body = products_batch(
        [product("P-1", unit_price="5.5"), broken_combo, product("P-1", unit_price="1.00")],
        [modifier_group("G-1", min_select=3, max_select=2)],
    )
    response = partner.put("products", body)
    assert sorted(error_paths(response)) == [
        "modifier_groups[0].max_select",
        "products[0].unit_price",
        "products[1].combo_components[2].substitute_group_id",
        "products[2].product_id",
    ]
    assert partner.host.storage().get_product(partner.partner_id, "P-C", None) is None


def test_500_products_are_accepted(partner):
    body = products_batch([product(f"P-{number}") for number in range(500)])
    response = partner.put("products", body)
    assert response.status_code == 202, response.text
    assert response.json()["record_count"] == 500
    assert partner.host.storage().get_product(partner.partner_id, "P-499", None) is not None


def test_501_products_are_a_batch_too_large(partner):
    body = products_batch([product(f"P-{number}") for number in range(501)])
    problem = problem_of(partner.put("products", body), 400, "BATCH_TOO_LARGE")
    assert "500" in problem["detail"]
    assert partner.host.storage().get_product(partner.partner_id, "P-0", None) is None


# --- stores of store-specific products ----------------------------------------------------------


def test_a_product_for_an_unregistered_store_is_not_allowed(partner):
    body = products_batch([product("P-1"), product("P-2", store_id="S9")])
    problem = problem_of(partner.put("products", body), 403, "STORE_NOT_ALLOWED")
    assert "S9" in problem["detail"]
    assert partner.host.storage().get_product(partner.partner_id, "P-1", None) is None


def test_a_product_for_a_registered_store_without_master_data_is_accepted(partner):
    response = partner.put("products", products_batch([product("P-1", store_id="S1")]))
    assert response.status_code == 202, response.text
    assert partner.host.storage().get_product(partner.partner_id, "P-1", "S1") is not None


def test_a_product_for_another_partners_store_is_not_allowed(new_partner):
    owner = new_partner(stores=("S-A",))
    other = new_partner(stores=("S-B",))
    assert owner.put("products", products_batch([product(store_id="S-A")])).status_code == 202
    problem_of(other.put("products", products_batch([product(store_id="S-A")])), 403, "STORE_NOT_ALLOWED")


# --- versions -----------------------------------------------------------------------------------


def test_a_higher_version_replaces_the_product(partner):
    assert partner.put("products", products_batch([product(version=1, unit_price="5.50")])).status_code == 202
    newer = product(version=2, unit_price="5.90", last_modified_at="2026-11-02T09:00:00Z")
    assert partner.put("products", products_batch([newer])).status_code == 202
    stored = partner.host.storage().get_product(partner.partner_id, "P-BURGER", None)
    assert (stored.version, stored.document["unit_price"]) == (2, "5.90")


def test_a_lower_version_sent_later_does_not_overwrite(partner):
    newer = product(version=3, unit_price="5.90", last_modified_at="2026-11-03T09:00:00Z")
    older = product(version=2, unit_price="5.50", last_modified_at="2026-11-04T09:00:00Z")
    assert partner.put("products", products_batch([newer])).status_code == 202
    late = partner.put("products", products_batch([older]))
    assert late.status_code == 202  # accepted (it passed validation), but it is not the latest
    stored = partner.host.storage().get_product(partner.partner_id, "P-BURGER", None)
    assert (stored.version, stored.document["unit_price"]) == (3, "5.90")
    rows = partner.host.query(
        "SELECT version, document FROM products WHERE partner_id = ? AND product_id = ?", partner.partner_id, "P-BURGER"
    )
    assert [(version, json.loads(document)["unit_price"]) for version, document in rows] == [(3, "5.90")]


def test_with_equal_versions_the_later_change_wins(partner):
    first = product(version=4, unit_price="5.50", last_modified_at="2026-11-03T09:00:00Z")
    later = product(version=4, unit_price="5.70", last_modified_at="2026-11-03T10:00:00+00:00")
    earlier = product(version=4, unit_price="5.10", last_modified_at="2026-11-03T03:00:00-05:00")  # 08:00Z
    for body in (first, later, earlier):
        assert partner.put("products", products_batch([body])).status_code == 202
    assert partner.host.storage().get_product(partner.partner_id, "P-BURGER", None).document["unit_price"] == "5.70"


def test_versions_are_kept_per_store_scope(partner):
    general = product(version=5, unit_price="5.50")
    for_store = product(store_id="S1", version=1, unit_price="4.99")
    assert partner.put("products", products_batch([general])).status_code == 202
    assert partner.put("products", products_batch([for_store])).status_code == 202
    storage = partner.host.storage()
    assert storage.get_product(partner.partner_id, "P-BURGER", None).version == 5
    assert storage.get_product(partner.partner_id, "P-BURGER", "S1").version == 1


# --- resends ------------------------------------------------------------------------------------


def test_a_resend_is_already_received_with_the_original_count(partner):
    body = products_batch([product("P-1"), product("P-2")])
    assert partner.put("products", body).status_code == 202
    again = partner.put("products", body)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == {
        "batch_id": body["batch_id"],
        "status": "ALREADY_RECEIVED",
        "record_count": 2,
        "warnings": [],
    }


def test_a_resend_with_a_different_body_changes_nothing(partner):
    body = products_batch([product("P-1", unit_price="5.50")])
    assert partner.put("products", body).status_code == 202
    different = products_batch(
        [product("P-1", unit_price="9.99", version=9), product("P-2")], batch_id=body["batch_id"]
    )
    again = partner.put("products", different)
    assert again.status_code == 200
    answer = again.json()
    assert (answer["status"], answer["record_count"]) == ("ALREADY_RECEIVED", 1)
    assert [warning["code"] for warning in answer["warnings"]] == ["RESEND_BODY_IGNORED"]
    storage = partner.host.storage()
    assert storage.get_product(partner.partner_id, "P-1", None).document["unit_price"] == "5.50"
    assert storage.get_product(partner.partner_id, "P-2", None) is None


def test_a_batch_id_of_a_stores_batch_is_not_reused_for_products(partner):
    stores_body = stores_batch(store("S1"))
    assert partner.put("stores", stores_body).status_code == 202
    reused = partner.put("products", products_batch([product("P-1"), product("P-2")], batch_id=stores_body["batch_id"]))
    assert reused.status_code == 200
    answer = reused.json()
    assert (answer["status"], answer["record_count"]) == ("ALREADY_RECEIVED", 1)
    warnings = [(warning["code"], warning["path"], warning["field"]) for warning in answer["warnings"]]
    assert warnings == [("BATCH_ID_REUSED", "$", "batch_id")]
    assert partner.host.storage().get_product(partner.partner_id, "P-1", None) is None
