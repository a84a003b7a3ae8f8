"""Warnings where data would otherwise be lost without a word (decision 0023), over real HTTP.

- A batch_seq already received for the store-day: BATCH_SEQ_REPEATED on the 202 (both backends).
- A member name the service does not know (a misspelled optional field) is ignored as before, and
  reported: UNKNOWN_MEMBER_IGNORED at the record, with the member's path as its field.
- A resend whose only difference is how its batch_id is written is the same body: no RESEND_BODY_IGNORED.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import sqlite3
import uuid

import pytest

from ingest.batches import MAX_UNKNOWN_MEMBER_WARNINGS, is_field_name
from ingest.parsing import member_fields, member_names
from ingest.wire.requests import DailyClose, MappingsBatch, ProductsBatch, StoresBatch, TradeRecordsBatch
from tests.conftest import make_partner
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store, wait_for_result
from tests.e2e.test_resend import WRITES, forms_of, send
from tests.payloads import combo, mapping_batch, modifier_group, product, products_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

REPEATED = "BATCH_SEQ_REPEATED"
UNKNOWN = "UNKNOWN_MEMBER_IGNORED"


@pytest.fixture
def anywhere(backend_host):
    """A partner on each backend in turn."""
    return make_partner(backend_host)


def ticket(**changes) -> dict:
    """A Lisbon-style sale: a fiscal document number with punctuation, a product code with a slash."""
    return trade_record(
        "S1",
        DAY,
        [Line("ABC/12-XL", 2, 550), Line("P-COLA", 1, 199)],
        tax=130,
        fiscal_document_no=f"FT A/2026/{uuid.uuid4().int % 100000}",
        **changes,
    )


def accepted(response) -> dict:
    assert response.status_code == 202, response.text
    return response.json()


def coded(answer: dict, code: str) -> list[tuple[str, str | None, str]]:
    """(path, field, message) of each warning with code."""
    return [(w["path"], w.get("field"), w["message"]) for w in answer["warnings"] if w["code"] == code]


# --- BATCH_SEQ_REPEATED ---------------------------------------------------------------------------------


def test_a_batch_seq_received_before_for_the_store_day_is_warned_about(anywhere):
    open_store(anywhere, "S1")
    first = accepted(anywhere.post("trade-records", trade_batch("S1", DAY, [ticket()], batch_seq=1)))
    assert coded(first, REPEATED) == []
    second = accepted(anywhere.post("trade-records", trade_batch("S1", DAY, [ticket()], batch_seq=1)))
    [(path, field, message)] = coded(second, REPEATED)
    assert (path, field) == ("$", "batch_seq")
    assert "batch_seq 1" in message and "another batch" in message
    third = accepted(anywhere.post("trade-records", trade_batch("S1", DAY, [ticket()], batch_seq=1)))
    [(_, _, message)] = coded(third, REPEATED)
    assert "batch_seq 1" in message and "2 other batches" in message
    assert third["record_count"] == 1  # the records are stored all the same


def test_other_batch_seqs_days_and_stores_are_not_repeats(anywhere):
    open_store(anywhere, "S1")
    for seq in (1, 2, 3):
        assert coded(accepted(anywhere.post("trade-records", trade_batch("S1", DAY, [ticket()], seq))), REPEATED) == []
    other_day = trade_record(
        "S1", "2026-11-21", [Line("P-BURGER", 1, 550)], tax=44, opened_at="2026-11-21T12:00:00-05:00"
    )
    assert (
        coded(accepted(anywhere.post("trade-records", trade_batch("S1", "2026-11-21", [other_day], 1))), REPEATED) == []
    )


def test_a_resend_of_the_same_batch_is_not_a_repeated_batch_seq(anywhere):
    open_store(anywhere, "S1")
    batch = trade_batch("S1", DAY, [ticket()], batch_seq=1)
    accepted(anywhere.post("trade-records", batch))
    again = anywhere.post("trade-records", batch)
    assert again.status_code == 200 and again.json()["warnings"] == []


def test_a_repeated_batch_seq_shows_in_the_days_result_as_before(anywhere):
    """The warning says at once what reconciliation shows later: batch_seqs_received [1, 1]."""
    open_store(anywhere, "S1")
    records = [ticket(), ticket()]
    accepted(anywhere.post("trade-records", trade_batch("S1", DAY, records[:1], 1)))
    assert coded(accepted(anywhere.post("trade-records", trade_batch("S1", DAY, records[1:], 1))), REPEATED)
    close = accepted(
        anywhere.post("daily-close", daily_close("S1", DAY, totals_of(records, {"01"}, DIRECTIONS), batch_count=2))
    )
    assert close["warnings"] == []
    result = wait_for_result(anywhere, "S1", DAY)
    assert result["details"]["batch_seqs_received"] == [1, 1]


# --- UNKNOWN_MEMBER_IGNORED -----------------------------------------------------------------------------


def unknown_of(answer: dict) -> list[tuple[str, str | None]]:
    return [(path, field) for path, field, _ in coded(answer, UNKNOWN)]


def test_misspelled_members_of_a_trade_record_are_warned_at_every_depth(partner):
    open_store(partner, "S1")
    cheese = {
        "group_id": "G-CHEESE",
        "option_id": "O-CHEDDAR",
        "quantity": "1",
        "price_delta": "0.00",
        "price_delat": "0.50",
    }
    record = ticket(totl_amount="13.29")
    record["items"][1]["tip_amout"] = "1.00"
    record["items"][0]["modifiers"] = [cheese]
    record["payments"][0]["tip_amout"] = "1.00"
    record["tax_lines"] = [
        {
            "tax_code": "IVA/23",
            "tax_rate": "0.23",
            "taxable_amount": "12.99",
            "tax_amount": "1.30",
            "is_inclusive": False,
            "tax_cod": "IVA",
        }
    ]
    body = {**trade_batch("S1", DAY, [ticket(), record], batch_seq=1), "batch_sq": 1}
    answer = accepted(partner.post("trade-records", body))
    assert unknown_of(answer) == [
        ("trade_records[1]", "items[0].modifiers[0].price_delat"),
        ("trade_records[1]", "items[1].tip_amout"),
        ("trade_records[1]", "payments[0].tip_amout"),
        ("trade_records[1]", "totl_amount"),
        ("trade_records[1]", "tax_lines[0].tax_cod"),
        ("$", "batch_sq"),
    ]
    message = coded(answer, UNKNOWN)[1][2]
    assert message.startswith("tip_amout is not a field the service knows") and "1.00" not in message
    # Ignored as before: the record is stored as the known members say.
    stored = partner.host.query(
        "SELECT document FROM trade_records WHERE partner_id = ? AND trade_record_id = ?",
        partner.partner_id,
        record["trade_record_id"],
    )
    document = json.loads(stored[0][0])
    assert "totl_amount" not in document and document["fiscal_document_no"] == record["fiscal_document_no"]


def test_unknown_members_of_stores_products_groups_mappings_and_closes_are_warned(partner):
    answer = accepted(partner.put("stores", stores_batch(store("S1", store_nmae="Loja Baixa"))))
    assert unknown_of(answer) == [("stores[0]", "store_nmae")]

    component_typo = combo()
    component_typo["combo_components"][2]["substitue_group_id"] = "G-DRINKS"
    group = modifier_group()
    group["options"][1]["is_defualt"] = True
    body = products_batch([product("ABC/12-XL", descripton="ไก่ทอด"), component_typo], [{**group, "max_selct": 1}])
    answer = accepted(partner.put("products", body))
    assert unknown_of(answer) == [
        ("products[0]", "descripton"),
        ("products[1]", "combo_components[2].substitue_group_id"),
        ("modifier_groups[0]", "options[1].is_defualt"),
        ("modifier_groups[0]", "max_selct"),
    ]

    mapping = mapping_batch(("01", "SALE"), ("VD/02", "REFUND"))
    mapping["mappings"][1]["standard_cod"] = "VOID"
    assert unknown_of(accepted(partner.put("mappings/transaction-types", mapping))) == [("mappings[1]", "standard_cod")]

    close = daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS), tip_amout="0.00")
    assert unknown_of(accepted(partner.post("daily-close", close))) == [("$", "tip_amout")]


def test_localized_names_hold_language_tags_not_members(partner):
    open_store(partner, "S1")
    names = {"en-US": "Fried chicken", "th": "ไก่ทอด", "zh-Hant-TW": "炸雞", "ar": "دجاج مقلي", "pt-PT": "Frango"}
    body = products_batch(
        [product("P-ไก่/01", name=names, category_id="C/1", category_name=names)], [modifier_group(name=names)]
    )
    assert accepted(partner.put("products", body))["warnings"] == []


def test_a_member_name_that_does_not_read_as_a_field_name_is_not_repeated(partner):
    open_store(partner, "S1")
    record = ticket()
    odd = {
        "Visa 4111111111111111": "x",
        "4111111111111111": "x",
        "jane.doe@example.com": "x",
        "card_4111111111111111": "x",
        "会员": "x",
    }
    record.update(odd)
    record["items"][0]["+1 212 555 0123"] = "x"
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    answer = accepted(response)
    assert unknown_of(answer) == [("trade_records[0]", "items[0]")] + [("trade_records[0]", None)] * len(odd)
    for name in [*odd, "+1 212 555 0123", "jane", "会员"]:
        assert name not in response.text
    assert all("does not read as a field name" in message for _, _, message in coded(answer, UNKNOWN))


def test_unknown_members_are_counted_after_the_first_hundred(partner):
    """A partner on a later version of the interface sends a new member in every record."""
    open_store(partner, "S1")
    records = [ticket(loyalty_points="12") for _ in range(120)]
    answer = accepted(partner.post("trade-records", trade_batch("S1", DAY, records)))
    warnings = coded(answer, UNKNOWN)
    assert len(warnings) == MAX_UNKNOWN_MEMBER_WARNINGS + 1
    assert [(path, field) for path, field, _ in warnings[:2]] == [
        ("trade_records[0]", "loyalty_points"),
        ("trade_records[1]", "loyalty_points"),
    ]
    assert warnings[-1][:2] == ("$", None) and warnings[-1][2].startswith("20 more members")


def test_a_name_of_another_object_of_the_request_is_not_reported_in_the_wrong_place(partner):
    """The same record gets the same warnings whatever else its batch holds (ingest/parsing.py
    `unknown_members`): amount is a payment's member, so it is not reported in a record, with or without a
    misspelled member elsewhere in the batch."""
    open_store(partner, "S1")
    alone = accepted(partner.post("trade-records", trade_batch("S1", DAY, [ticket(amount="1.00")])))
    assert unknown_of(alone) == []
    beside = accepted(
        partner.post("trade-records", trade_batch("S1", DAY, [ticket(amount="1.00"), ticket(tip_amout="1.00")]))
    )
    assert unknown_of(beside) == [("trade_records[1]", "tip_amout")]


def test_a_resend_with_an_unknown_member_is_answered_from_its_marker_without_it(partner):
    open_store(partner, "S1")
    batch = trade_batch("S1", DAY, [ticket(tip_amout="1.00")])
    assert unknown_of(accepted(partner.post("trade-records", batch))) == [("trade_records[0]", "tip_amout")]
    again = partner.post("trade-records", batch)
    # the first answer's warning, told again (decision 0030)
    assert again.status_code == 200 and unknown_of(again.json()) == [("trade_records[0]", "tip_amout")]


def test_every_model_has_a_required_member():
    """The unknown-name check takes an object none of whose names is known, with string values only, for
    a localized text (ingest/parsing.py `_NameCheck`): an object of a model always has a known name."""

    def models_under(model, seen):
        if model not in seen:
            seen.add(model)
            for held in member_fields(model).values():
                if held is not None:
                    models_under(held, seen)
        return seen

    for batch in (StoresBatch, ProductsBatch, MappingsBatch, TradeRecordsBatch, DailyClose):
        for model in models_under(batch, set()):
            assert any(info.is_required() for info in model.__pydantic_fields__.values()), model
        assert "batch_id" in member_names(batch)


def test_field_names_are_those_that_carry_no_personal_or_card_data():
    assert all(map(is_field_name, ["tip_amout", "loyaltyPoints", "x-ext", "address_line_2", "iso3166"]))
    assert not any(
        map(
            is_field_name,
            [
                "Visa 4111111111111111",
                "card_4111111111111111",
                "jane.doe@example.com",
                "2024_total",
                "tip amount",
                "会员",
                "a" * 41,
                "emp12345",
            ],
        )
    )


# --- a resend that writes its batch_id differently ------------------------------------------------------


@pytest.mark.parametrize("kind", WRITES)
def test_a_resend_that_only_writes_its_batch_id_differently_is_the_same_body(anywhere, kind):
    open_store(anywhere)
    body = WRITES[kind][2]()
    first = send(anywhere, kind, body)
    assert first.status_code == 202, first.text
    for form in forms_of(body["batch_id"]):
        again = send(anywhere, kind, {**body, "batch_id": form})
        assert again.status_code == 200 and again.json()["warnings"] == [], (form, again.text)
    # A body that says something else is still a different body, in any form of the batch_id (a member the
    # service does not know says nothing to it: decision 0029).
    changed = WRITES[kind][3]({**body, "batch_id": body["batch_id"].upper()})
    codes = [w["code"] for w in send(anywhere, kind, changed).json()["warnings"]]
    assert codes == ["RESEND_BODY_IGNORED"]


def test_the_batch_id_is_found_wherever_it_is_written_and_however_escaped(partner):
    """First sent with the batch_id last: found by reading the members before it. Only its text is taken
    in canonical form: every other byte, spaces included, is compared as sent."""
    open_store(partner)
    batch = trade_batch("S1", DAY, [ticket()])
    sent = batch["batch_id"]
    last = {**{k: v for k, v in batch.items() if k != "batch_id"}, "batch_id": sent}
    accepted(partner.post("trade-records", json.dumps(last).encode()))
    upper = json.dumps({**last, "batch_id": sent.upper()})
    escaped = upper.replace(sent.upper(), "".join(f"\\u{ord(c):04x}" for c in sent.upper()))
    braced = upper.replace(sent.upper(), "{" + sent.upper() + "}")
    for text in (upper, escaped, braced):
        again = partner.post("trade-records", text.encode())
        assert again.status_code == 200 and again.json()["warnings"] == [], text[-80:]
    # other whitespace says the same (decision 0029); another value does not
    spaced = upper.replace('"batch_id": "', '"batch_id" : "')
    assert partner.post("trade-records", spaced).json()["warnings"] == []
    other = upper.replace('"batch_seq": 1', '"batch_seq": 2')
    assert [w["code"] for w in partner.post("trade-records", other).json()["warnings"]] == ["RESEND_BODY_IGNORED"]


def test_only_the_batchs_own_batch_id_is_taken_in_canonical_form(partner):
    """A record's own member named batch_id (unknown to the service) is partner data like any other."""
    open_store(partner)
    batch = trade_batch("S1", DAY, [ticket()])
    sent = batch["batch_id"]
    batch["trade_records"][0]["batch_id"] = sent
    first = accepted(partner.post("trade-records", batch))  # warns: the record's batch_id is not a field
    same = partner.post("trade-records", {**batch, "batch_id": sent.upper()})
    assert same.status_code == 200 and same.json()["warnings"] == first["warnings"]  # the first answer's
    # a member the service does not know says nothing to it (decision 0029), whatever it holds
    record = {**batch["trade_records"][0], "batch_id": sent.upper()}
    unknown_changed = partner.post("trade-records", {**batch, "batch_id": sent.upper(), "trade_records": [record]})
    assert "RESEND_BODY_IGNORED" not in [w["code"] for w in unknown_changed.json()["warnings"]]
    record = {**record, "tip_amount": "0.01"}
    changed = partner.post("trade-records", {**batch, "batch_id": sent.upper(), "trade_records": [record]})
    assert [w["code"] for w in changed.json()["warnings"]][:1] == ["RESEND_BODY_IGNORED"]


def test_a_marker_stored_before_the_canonical_digest_still_answers_its_resends(partner):
    """Markers stored before kept the SHA-256 of the bytes as sent: the same bytes still match, and so does
    another writing of a batch_id first sent in canonical form (its bytes were already canonical)."""
    open_store(partner)
    canonical = trade_batch("S1", DAY, [ticket()], batch_seq=1)
    upper = trade_batch("S1", DAY, [ticket()], batch_seq=2)
    upper["batch_id"] = upper["batch_id"].upper()
    for body in (canonical, upper):
        raw = json.dumps(body).encode()
        accepted(partner.post("trade-records", raw))
        with contextlib.closing(sqlite3.connect(partner.host.data_dir / "pos.sqlite3")) as db, db:
            db.execute(
                "UPDATE batches SET body_digest = ? WHERE partner_id = ? AND batch_id = ?",
                (hashlib.sha256(raw).hexdigest(), partner.partner_id, body["batch_id"].lower()),
            )
        again = partner.post("trade-records", raw)
        assert again.status_code == 200 and again.json()["warnings"] == []
    other_form = partner.post("trade-records", {**canonical, "batch_id": canonical["batch_id"].upper()})
    assert other_form.status_code == 200 and other_form.json()["warnings"] == []


def test_the_openapi_document_says_that_unknown_members_are_ignored_and_warned(partner):
    document = partner.get("openapi.json").json()
    bodies = [
        operation["requestBody"]
        for item in document["paths"].values()
        for operation in item.values()
        if "requestBody" in operation
    ]
    assert len(bodies) == 5
    assert all("ignored" in body["description"] and UNKNOWN in body["description"] for body in bodies)
    assert UNKNOWN in document["info"]["description"]
    codes = document["components"]["schemas"]["BatchWarning"]["properties"]["code"]["examples"]
    assert {UNKNOWN, REPEATED} <= set(codes)


def test_sqlite_finds_the_batches_with_a_seq_through_its_index(tmp_path):
    """Read before every batch of trade records: one index seek, not a scan of the partner's batches (the
    planner once preferred the primary key, partner_id alone, when the query also named kind)."""
    from backends.sqlite.storage import SqliteStorage

    storage = SqliteStorage(tmp_path)
    statements: list[str] = []
    with storage.db.read() as db:
        db.set_trace_callback(statements.append)
        storage.batches_with_seq("p-1", "S1", dt.date(2026, 11, 20), 1, 101)
        db.set_trace_callback(None)
        [select] = [statement for statement in statements if statement.lstrip().upper().startswith("SELECT")]
        plan = " ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + select))
    assert "COVERING INDEX batches_by_day_seq" in plan, plan
