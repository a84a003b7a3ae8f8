"""`pos-partner explain DIR` and PosClient.explain_day over real HTTP (decision 0097): a ramen shop's day
(tests/ramen_day.py) pushed as HQ got it, then explained from the folder as the partner's POS holds it. On
days with each kind of difference (missing at HQ, only at HQ, a different version counted, a different type,
a different amount) the transactions listed add up, per control total, exactly to the reconciliation's
differences; a close that counts otherwise than its own records is told apart, with the records HQ counts by
a rule (the voided ticket)."""

from __future__ import annotations

import copy
import json
import uuid
from decimal import Decimal

import pytest
from pos_partner_client import PosClient
from pos_partner_client.cli import EXIT_MISMATCHED, EXIT_OK

from tests.conftest import make_partner
from tests.e2e.test_partner_cli import pos_partner
from tests.ramen_day import DAY, MAPPING, STORE, ramen_close, ramen_records, ramen_store, write_day_folder

TOTALS = (
    "trade_record_count",
    "item_row_count",
    "payment_row_count",
    "net_sales_amount",
    "tax_amount",
    "tip_amount",
    "payment_total_amount",
)


def record_id(number: int) -> str:
    return f"{STORE}-{DAY}-{number:04d}"


def hq_and_partner(kind: str) -> tuple[list[dict], list[dict]]:
    """The records HQ received and the records the partner's POS holds, differing by `kind`."""
    pos = ramen_records()
    hq = copy.deepcopy(pos)
    if kind == "missing_at_hq":
        hq = hq[:-1]  # the last ticket never reached HQ
    elif kind == "only_at_hq":
        extra = copy.deepcopy(pos[0])
        extra.update(trade_record_id=record_id(99), employee_id="TRAINING")
        hq.append(extra)  # a training ticket the POS keeps out of its day
    elif kind == "version":
        revised = pos[4]  # the split payment, corrected to two ramens and no beer: never sent to HQ
        revised.update(version=2, last_modified_at="2026-11-20T21:00:00+09:00")
        revised.update(total_amount="1960", tax_amount="178", subtotal_amount="1960")
        revised["items"] = revised["items"][:1]
        revised["payments"] = revised["payments"][:1] + [{**revised["payments"][1], "amount": "960"}]
    elif kind == "type":
        hq[1]["source_transaction_type"] = "03"  # HQ got it as a void
    elif kind == "amount":
        hq[0].update(tax_amount="130")  # same version, another tax
    return hq, pos


def pushed_day(host, hq_records: list[dict], close: dict):
    """A partner of its own whose day HQ received as `hq_records` with `close`, reconciled."""
    partner = make_partner(host, (STORE,))
    client = PosClient(partner.host.base_url, partner.key, namespace=uuid.uuid4())
    assert client.put_stores([ramen_store()]).status == "ACCEPTED"
    assert client.put_mappings(MAPPING).status == "ACCEPTED"
    client.push_day(STORE, DAY, hq_records, close)
    result = client.wait_for_result(STORE, DAY, 60)
    assert result.final
    return partner, client, result


def listed_sums(explanation) -> dict[str, Decimal]:
    entries = explanation.missing_at_hq + explanation.only_at_hq + explanation.different
    return {
        name: sum((entry.fields[name]["difference"] for entry in entries if name in entry.fields), Decimal(0))
        for name in TOTALS
    }


def raw_differences(result) -> dict[str, Decimal]:
    return {
        name: Decimal(str(getattr(result.actual, name))) - Decimal(str(getattr(result.expected, name)))
        for name in TOTALS
    }


@pytest.mark.parametrize("kind", ["missing_at_hq", "only_at_hq", "version", "type", "amount"])
def test_each_kind_of_difference_adds_up_to_the_reconciliation(host, kind):
    hq_records, pos_records = hq_and_partner(kind)
    close = ramen_close(pos_records)  # the POS's close, of its own records
    _, client, result = pushed_day(host, hq_records, close)
    assert result.status == "MISMATCHED"

    explanation = client.explain_day(STORE, DAY, pos_records, close)

    assert listed_sums(explanation) == raw_differences(result)
    assert explanation.explained and explanation.close_vs_records == {}
    assert {name for name, gap in raw_differences(result).items() if gap} == set(explanation.differences)
    found = {
        "missing_at_hq": [entry.trade_record_id for entry in explanation.missing_at_hq],
        "only_at_hq": [entry.trade_record_id for entry in explanation.only_at_hq],
        "different": [entry.trade_record_id for entry in explanation.different],
    }
    expected = {
        "missing_at_hq": {"missing_at_hq": [record_id(13)], "only_at_hq": [], "different": []},
        "only_at_hq": {"missing_at_hq": [], "only_at_hq": [record_id(99)], "different": []},
        "version": {"missing_at_hq": [], "only_at_hq": [], "different": [record_id(5)]},
        "type": {"missing_at_hq": [], "only_at_hq": [], "different": [record_id(2)]},
        "amount": {"missing_at_hq": [], "only_at_hq": [], "different": [record_id(1)]},
    }[kind]
    assert found == expected
    if kind == "version":
        assert explanation.different[0].fields["version"] == {"partner": 2, "hq": 1}
    if kind == "type":
        assert explanation.different[0].fields["transaction_type"] == {"partner": "01", "hq": "03"}
        assert set(explanation.differences) == {"net_sales_amount"}


def every_kind() -> tuple[list[dict], list[dict]]:
    """One day with every kind of difference at once."""
    pos = ramen_records()
    hq = copy.deepcopy(pos)
    for kind in ("missing_at_hq", "only_at_hq", "version", "type", "amount"):
        hq_kind, pos_kind = hq_and_partner(kind)
        if kind == "missing_at_hq":
            hq = hq[:-1]
        elif kind == "only_at_hq":
            hq.append(hq_kind[-1])
        elif kind == "version":
            pos[4] = pos_kind[4]
        elif kind == "type":
            hq[1] = hq_kind[1]
        else:
            hq[0] = hq_kind[0]
    return hq, pos


def test_the_command_lists_every_kind_in_json_and_tables(host, tmp_path):
    hq_records, pos_records = every_kind()
    close = ramen_close(pos_records)
    partner, _, result = pushed_day(host, hq_records, close)
    folder = write_day_folder(tmp_path / "day", pos_records, close)

    ran = pos_partner(partner, "explain", str(folder), "--format", "json")

    assert ran.returncode == EXIT_MISMATCHED, ran.stderr
    day = json.loads(ran.stdout)["store_days"][0]
    assert [entry["trade_record_id"] for entry in day["missing_at_hq"]] == [record_id(13)]
    assert [entry["trade_record_id"] for entry in day["only_at_hq"]] == [record_id(99)]
    assert sorted(entry["trade_record_id"] for entry in day["different"]) == [record_id(1), record_id(2), record_id(5)]
    for name, gap in raw_differences(result).items():
        listed = sum(
            Decimal(entry["fields"][name]["difference"])
            for kind in ("missing_at_hq", "only_at_hq", "different")
            for entry in day[kind]
            if name in entry["fields"]
        )
        assert listed == gap, name
        if gap:
            assert Decimal(day["differences"][name]["unexplained"]) == 0
    table = pos_partner(partner, "explain", str(folder))
    assert table.returncode == EXIT_MISMATCHED
    for words in ("missing at HQ", "only at HQ", "a different version counted", "a different type", record_id(13)):
        assert words in table.stdout, table.stdout


def test_a_close_that_leaves_out_the_voided_ticket_is_told_apart_from_the_records(host):
    records = ramen_records()
    voided = records[5]
    close = ramen_close(records)
    # The POS's close leaves the voided ticket out of net sales and tax; HQ counts it by its type (0027).
    close["net_sales_amount"] = str(Decimal(close["net_sales_amount"]) - 891)
    close["tax_amount"] = str(Decimal(close["tax_amount"]) - 89)
    _, client, result = pushed_day(host, records, close)
    assert result.status == "MISMATCHED"

    explanation = client.explain_day(STORE, DAY, records, close)

    assert explanation.missing_at_hq == explanation.only_at_hq == explanation.different == []
    assert explanation.close_vs_records == {"net_sales_amount": "-891", "tax_amount": "-89"}
    assert explanation.differences["net_sales_amount"]["unexplained"] == "891"
    assert [(entry.trade_record_id, entry.note) for entry in explanation.counted_by_rule] == [
        (voided["trade_record_id"], "VOIDED_COUNTED_BY_TYPE")
    ]


def test_a_matched_day_has_nothing_to_explain(host, tmp_path):
    records = ramen_records()
    partner, _, result = pushed_day(host, records, ramen_close(records))
    assert result.status == "MATCHED"
    folder = write_day_folder(tmp_path / "day", records, ramen_close(records))
    ran = pos_partner(partner, "explain", str(folder))
    assert ran.returncode == EXIT_OK, ran.stdout + ran.stderr
    assert "nothing to explain" in ran.stdout


def test_every_kind_adds_up_on_the_emulators(azure_host):
    hq_records, pos_records = every_kind()
    close = ramen_close(pos_records)
    _, client, result = pushed_day(azure_host, hq_records, close)
    explanation = client.explain_day(STORE, DAY, pos_records, close)
    assert listed_sums(explanation) == raw_differences(result)
    assert explanation.explained
    assert len(explanation.missing_at_hq + explanation.only_at_hq + explanation.different) == 5
