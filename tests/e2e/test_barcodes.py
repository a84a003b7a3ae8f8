"""Barcodes printed in names are not card numbers (decision 0041), over real HTTP, and the thresholds
on the samples of tests/barcode_samples.py: every published test card number in free text refused, at
most 0.1 % of valid EAN-13, JAN, UPC-A and ISBN-13 barcodes in names refused."""

from __future__ import annotations

import re

import pytest

from ingest.card_numbers import is_payment_card_number
from tests import barcode_samples as barcodes
from tests.e2e.test_business_day import DAY, open_store
from tests.payloads import error_paths
from tests.trade_payloads import Line, trade_batch, trade_record

# Each passes the Luhn check in a card network's range (Visa 13, Maestro 13): refused before barcodes were recognised.
BARCODE_NAMES = [
    "お茶 500ml JAN 4901234500044",
    "Apfelschorle 0,5l EAN 4006381334013 x2",
    "Tea 4 901234 500044",
    "Biscuits 5000159400022",
]


@pytest.mark.parametrize("name", BARCODE_NAMES)
def test_a_barcode_in_a_product_name_is_accepted(partner, name):
    # its barcode is also a card number of a network (what was refused before barcodes were recognised)
    assert any(is_payment_card_number(digits) for digits in re.findall(r"\d+", name.replace(" ", "")))
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-TEA", 1, 550)])
    record["items"][0]["product_name"] = name
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    assert response.status_code == 202, response.text


@pytest.mark.parametrize("text", ["VISA 4111 1111 1111 1111", "カード 4222222222222", "4988-4388-4388-4305 ok"])
def test_a_card_number_beside_a_name_is_still_refused(partner, text):
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-TEA", 1, 550)])
    record["items"][0]["product_name"] = f"お茶 JAN 4901234500044 {text}"
    response = partner.post("trade-records", trade_batch("S1", DAY, [record]))
    assert error_paths(response) == ["trade_records[0].items[0].product_name"]
    assert "4111" not in response.text and "4222" not in response.text and "4988" not in response.text


def test_the_bounds_hold_on_the_samples():
    cards = barcodes.measure_test_cards()
    assert cards.refused == cards.total > 1000
    tallies = barcodes.measure_barcodes(2_000)
    refused = sum(tally.refused for tally in tallies.values())
    total = sum(tally.total for tally in tallies.values())
    assert refused <= barcodes.MAX_BARCODES_REFUSED * total
    for length, tally in barcodes.measure_random_cards(500).items():
        assert tally.refused == tally.total or length == 13, length
