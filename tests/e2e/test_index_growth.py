"""A partner's record index grows on Cosmos DB (decisions 0092 and 0115), over real HTTP on the emulators: with
COSMOS_INDEX_PARTITION_MAX_ENTRIES at 8, a few hundred records close node after node, while batches run
concurrently and two versions of one record race; no logical partition ever holds more than 8 entries,
every record has exactly one entry, the payment-id look-up finds records in every node, and the day
MATCHES its close."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from backends.cosmos.index_layout import HEAD_ID, LAYOUT_ID, Layout
from backends.cosmos.items import query
from backends.cosmos.keys import compound_key
from backends.cosmos.storage import CosmosStorage
from tests.concurrency import all_at_once
from tests.conftest import make_partner, start_azure_host
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store, wait_for_result
from tests.e2e.test_partner_reads import REUSED, sale
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

MAX_ENTRIES = 8
BATCHES, PER_BATCH = 8, 60  # 480 records: 30 a bucket, where 8 fit a node


@pytest.fixture(scope="module")
def grown_host(tmp_path_factory, cosmos_emulator):
    from devhost.azurite_emulator import start_azurite

    tmp = tmp_path_factory.mktemp("index-growth")
    azurite = start_azurite(tmp)
    running = start_azure_host(
        tmp, cosmos_emulator, azurite.connection_string, COSMOS_INDEX_PARTITION_MAX_ENTRIES=str(MAX_ENTRIES)
    )
    yield running
    running.stop()
    azurite.stop()


@pytest.fixture(scope="module")
def cosmos(grown_host, cosmos_emulator):
    opened = CosmosStorage(cosmos_emulator.endpoint, grown_host.env["COSMOS_DATABASE"], key=cosmos_emulator.key)
    yield opened
    opened.close()


def index_items(cosmos, partner_id: str) -> list[dict]:
    return query(
        cosmos._containers.trade_records,
        "SELECT c.id, c.pk, c.trade_record_id, c.version, c.closed, c.entries, c.buckets FROM c "
        "WHERE STARTSWITH(c.pk, @prefix)",
        prefix=compound_key("i", partner_id) + "|",
    )


def test_the_index_grows_several_times_and_every_rule_stays_exact(grown_host, cosmos):
    partner = make_partner(grown_host)
    open_store(partner)
    seq = itertools.count(1)
    latest: dict[str, dict] = {}

    def post(records: list[dict]) -> dict:
        response = partner.post("trade-records", trade_batch("S1", DAY, records, next(seq)))
        assert response.status_code == 202, response.text
        return response.json()

    batches = [
        [sale(f"T-{batch}/{number}", f"PAY {batch}-{number}") for number in range(PER_BATCH)]
        for batch in range(BATCHES)
    ]
    for records in batches:
        latest.update({record["trade_record_id"]: record for record in records})
    # Four batches at a time: concurrent creations in the same nodes, and closes racing them.
    for first in range(0, BATCHES, 4):
        answers = all_at_once(4, lambda i, first=first: post(batches[first + i]))
        assert all(answer["status"] == "ACCEPTED" and reused(answer) == [] for answer in answers), answers

    # Two versions of one record sent at the same moment: the same version twice (one counts), and
    # versions 2 and 3 (3 stays), spread over every node.
    twins = [record["trade_record_id"] for record in batches[0][:20]]
    rivals = [record["trade_record_id"] for record in batches[-1][:20]]
    twice = [sale(one, f"PAY {one} v2", version=2, last_modified_at="2026-11-20T21:00:00Z") for one in twins]
    second = [sale(one, f"PAY {one} v2", version=2, last_modified_at="2026-11-20T21:00:00Z") for one in rivals]
    third = [
        sale(one, f"PAY {one} v3", version=3, last_modified_at="2026-11-20T22:00:00Z", lines=[Line("P-COLA", 2, 199)])
        for one in rivals
    ]
    all_at_once(4, lambda i: post([twice, twice, second, third][i]))
    latest.update({record["trade_record_id"]: record for record in twice + third})

    # The payment-id rule finds records in the first nodes and in the last ones.
    early, late = batches[0][30], batches[-1][-1]
    reuse = sale("T-reuse", early["payments"][0]["payment_id"], late["payments"][0]["payment_id"])
    assert reused(post([reuse])) == [
        ("trade_records[0]", "payments[0].payment_id"),
        ("trade_records[0]", "payments[1].payment_id"),
    ]
    latest[reuse["trade_record_id"]] = reuse

    items = index_items(cosmos, partner.partner_id)
    entries = [item for item in items if item["id"] not in (HEAD_ID, LAYOUT_ID)]
    per_partition = Counter(item["pk"] for item in entries)
    assert max(per_partition.values()) <= MAX_ENTRIES
    assert sorted(entry["trade_record_id"] for entry in entries) == sorted(latest)  # one entry each
    assert {entry["trade_record_id"]: entry["version"] for entry in entries} == {
        one: record["version"] for one, record in latest.items()
    }
    heads = [item for item in items if item["id"] == HEAD_ID]
    assert all(head["entries"] <= MAX_ENTRIES for head in heads)
    (item,) = [item for item in items if item["id"] == LAYOUT_ID]
    layout = Layout.of_item({**item, "_etag": ""})
    # Grown several times: every bucket closed at least twice (16 leaves at most, one a bucket, hold the rest).
    assert all(layout.chain(bucket).leaf >= 2 for bucket in range(16)) and len(per_partition) > 48
    open_nodes = {node.key(partner.partner_id) for node in layout.nodes()} - {
        node.key(partner.partner_id) for node in layout.closed
    }
    assert len(open_nodes) == 16 and set(per_partition) <= {
        node.key(partner.partner_id) for node in layout.nodes()
    }  # nothing retired here: no entry expired

    totals = totals_of(list(latest.values()), {"01"}, DIRECTIONS)
    close = partner.post("daily-close", daily_close("S1", DAY, totals, next(seq) - 1))
    assert close.status_code == 202, close.text
    result = wait_for_result(partner, "S1", DAY, 60)
    assert result["status"] == "MATCHED", result


def reused(answer: dict) -> list[tuple[str, str]]:
    return [(w["path"], w["field"]) for w in answer["warnings"] if w["code"] == REUSED]
