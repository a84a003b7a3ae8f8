"""Several instances at once (decision 0060): local host processes sharing one store, as Flex Consumption
runs many instances against one Cosmos DB account and one queue.

On both backends: the Cosmos DB and Azurite emulators (one database, one Azurite), and one SQLite data
folder (the embedded backend allows it: WAL, write transactions that take the lock first, and a queue whose
receive is one UPDATE ... RETURNING under that lock; decision 0060).
Requests go through every instance at once: duplicates of one trade-records batch and of one daily close,
versions of one trade record, and closes of other days whose reconciliation messages the instances' queue
triggers compete for. What must hold: one 202 per batch_id, the others 200 ALREADY_RECEIVED; the highest
version stays; each close is reconciled once, and its result is kept.

INSTANCES (default 2) and INSTANCE_REQUESTS (default 50, duplicates of each batch) make the long form;
the figures are printed (pytest -s) and recorded in docs/reliability.md.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from backends.cosmos.storage import CosmosStorage
from tests.concurrency import all_at_once
from tests.conftest import LocalHost, PartnerClient, make_partner, start_azure_host, start_host
from tests.e2e.test_business_day import wait_for_result
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

# Covers a message delivered before its close's commit (postponed by the visibility timeout, 30 s) on a
# loaded machine.
RESULT_TIMEOUT = 90.0

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

INSTANCES = int(os.environ.get("INSTANCES") or 2)
DUPLICATES = int(os.environ.get("INSTANCE_REQUESTS") or 50)
VERSIONS = 20
OTHER_DAYS = 10  # closes whose messages the instances' queue triggers compete for
DUPLICATED_DAY, VERSIONS_DAY = "2026-11-20", "2026-11-21"
DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
REVENUE = {"01"}
# Each reconciliation counted must come from its close's own message: the sweep (every 5 minutes) must
# not send one again while the test runs. The delay leaves the close's commit time to finish first. The
# demo partner, as `make run` creates it: instances started together on empty data all try to create it.
SETTINGS = {
    "RECONCILE_SWEEP_GRACE_SECONDS": "3600",
    "RECONCILE_DELAY_SECONDS": "2",
    "POS_CREATE_DEMO_PARTNER": "true",
}
RECONCILED = re.compile(r"reconciled partner_id=(\S+) store_id=(\S+) business_date=(\d{4}-\d\d-\d\d) status=")


class Instances:
    """Starts local hosts on one shared store: `start()` adds one, each with its own port and log."""

    def __init__(self, backend: str, tmp: Path, request) -> None:
        self.backend, self.tmp, self.request = backend, tmp, request
        self.hosts: list[LocalHost] = []
        self.database = f"instances-{uuid.uuid4().hex[:8]}"
        if backend == "azure":
            from devhost.azurite_emulator import start_azurite

            self.cosmos = request.getfixturevalue("cosmos_emulator")
            # An Azurite of their own: no other test's host takes messages from their queue.
            self.azurite = start_azurite(tmp)

    def start(self, count: int = 1) -> list[LocalHost]:
        """Start `count` hosts at the same moment (instances of a scale-out start together)."""
        with ThreadPoolExecutor(count) as pool:
            started = list(pool.map(self._start_one, range(len(self.hosts), len(self.hosts) + count)))
        self.hosts += started
        return started

    def _start_one(self, number: int) -> LocalHost:
        tmp = self.tmp / f"instance-{number}"
        tmp.mkdir()
        if self.backend == "sqlite":
            return start_host(tmp, data_dir=self.tmp / "shared-data", **SETTINGS)
        return start_azure_host(tmp, self.cosmos, self.azurite.connection_string, database=self.database, **SETTINGS)

    def stop(self) -> None:
        for host in self.hosts:
            host.stop()
        if self.backend == "azure":
            self.azurite.stop()

    def store_day_rows(self, partner_id: str, business_date: str) -> list[tuple[str, int]]:
        """(trade_record_id, version) of the records stored for a store-day, read from the shared store."""
        date = dt.date.fromisoformat(business_date)
        if self.backend == "sqlite":
            rows = self.hosts[0].storage().store_day_rows(partner_id, "S1", date)
        else:
            storage = CosmosStorage(self.cosmos.endpoint, self.database, key=self.cosmos.key)
            try:
                rows = storage.store_day_rows(partner_id, "S1", date)
            finally:
                storage.close()
        return sorted((row.trade_record_id, row.version) for row in rows)


@pytest.fixture(params=["sqlite", "azure"])
def instances(request, tmp_path):
    started = Instances(request.param, tmp_path, request)
    yield started
    started.stop()


def through_every_host(partner: PartnerClient, hosts: list[LocalHost]) -> list[PartnerClient]:
    """The same partner and key, calling each host."""
    return [PartnerClient(host, partner.partner_id, partner.key, partner.key_id, partner.stores) for host in hosts]


def reconciliations(hosts: list[LocalHost], partner_id: str) -> Counter:
    """How many times each host reconciled each of the partner's store-days: {(host, date): n}, from the
    hosts' logs (the line reconcile.service writes once a result is saved)."""
    counted: Counter = Counter()
    for number, host in enumerate(hosts):
        for match in RECONCILED.finditer(host.log()):
            if match[1] == partner_id:
                counted[(number, match[3])] += 1
    return counted


def accepted_once(responses, record_count: int) -> None:
    statuses = Counter(response.status_code for response in responses)
    assert statuses == {202: 1, 200: len(responses) - 1}, [r.text for r in responses if r.status_code not in (200, 202)]
    for response in responses:
        answer = response.json()
        replayed = response.status_code == 200
        assert answer["status"] == ("ALREADY_RECEIVED" if replayed else "ACCEPTED"), answer
        assert answer["record_count"] == record_count, answer
        assert (response.headers.get("Idempotent-Replayed") == "true") == replayed


def record_on(business_date: str, **changes) -> dict:
    return trade_record(
        "S1", business_date, [Line("P-BURGER", 1, 550)], opened_at=f"{business_date}T12:00:00-05:00", **changes
    )


def close_of(business_date: str, records: tuple[dict, ...] = (), batch_count: int = 1) -> dict:
    """A daily close with the totals of `records`, as the POS computes them."""
    return daily_close("S1", business_date, totals_of(list(records), REVENUE, DIRECTIONS), batch_count)


def test_each_instance_takes_reconciliation_messages_from_the_shared_queue(instances):
    """Whichever instance a close arrives through, the queue trigger of any instance may reconcile it: shown
    for each instance alone (while both run, which one takes a message is up to the queue)."""
    (first,) = instances.start()
    partner = make_partner(first)
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    assert partner.post("daily-close", close_of("2026-11-01")).status_code == 202
    assert wait_for_result(partner, "S1", "2026-11-01", RESULT_TIMEOUT)["status"] == "MATCHED"

    (second,) = instances.start()
    first.stop()  # the second alone takes the next message, sent through it
    via_second = through_every_host(partner, [second])[0]
    assert via_second.post("daily-close", close_of("2026-11-02")).status_code == 202
    assert wait_for_result(via_second, "S1", "2026-11-02", RESULT_TIMEOUT)["status"] == "MATCHED"
    assert reconciliations([first, second], partner.partner_id) == {(0, "2026-11-01"): 1, (1, "2026-11-02"): 1}


def test_instances_at_once_accept_each_batch_once_keep_the_highest_version_and_reconcile_each_close_once(instances):
    hosts = instances.start(INSTANCES)
    for host in hosts:  # every instance runs the queue trigger on the one queue
        assert "queue trigger reconcile_store_day on 'reconcile-requests'" in host.log()
    partner = make_partner(hosts[0])
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    via = through_every_host(partner, hosts)

    def spread(count: int, send) -> list:
        """`count` requests at once, request i through host i mod INSTANCES."""
        return all_at_once(count, lambda i: send(via[i % len(via)], i))

    # Duplicates of one trade-records batch.
    records = [record_on(DUPLICATED_DAY, tax=40 + i) for i in range(50)]
    batch = orjson.dumps(trade_batch("S1", DUPLICATED_DAY, records))
    batch_answers = spread(DUPLICATES, lambda client, i: client.post("trade-records", batch))
    accepted_once(batch_answers, 50)
    assert instances.store_day_rows(partner.partner_id, DUPLICATED_DAY) == sorted(
        (r["trade_record_id"], 1) for r in records
    )

    # Versions of one trade record, each in its own batch.
    record_id = f"T-{uuid.uuid4().hex[:12]}"
    versions = [
        record_on(
            VERSIONS_DAY,
            tax=10 * n,
            version=n,
            trade_record_id=record_id,
            last_modified_at=f"2026-11-22T10:00:{n:02d}Z",
        )
        for n in range(1, VERSIONS + 1)
    ]
    version_batches = [trade_batch("S1", VERSIONS_DAY, [v], batch_seq=v["version"]) for v in versions]
    version_answers = spread(VERSIONS, lambda client, i: client.post("trade-records", version_batches[i]))
    assert [r.status_code for r in version_answers] == [202] * VERSIONS, [r.text for r in version_answers]
    assert instances.store_day_rows(partner.partner_id, VERSIONS_DAY) == [(record_id, VERSIONS)]

    # Duplicates of one daily close, then closes of the versions' day and of other days, each with a record,
    # sent at once: their messages are on the one queue for every instance's trigger.
    close = orjson.dumps(close_of(DUPLICATED_DAY, tuple(records)))
    close_answers = spread(DUPLICATES, lambda client, i: client.post("daily-close", close))
    accepted_once(close_answers, 1)
    other_days = [f"2026-11-{day:02d}" for day in range(3, 3 + OTHER_DAYS)]
    other_records = [record_on(day) for day in other_days]
    batch_of_day = spread(
        OTHER_DAYS, lambda client, i: client.post("trade-records", trade_batch("S1", other_days[i], [other_records[i]]))
    )
    assert [r.status_code for r in batch_of_day] == [202] * OTHER_DAYS
    closes = [close_of(VERSIONS_DAY, (versions[-1],), batch_count=VERSIONS)]
    closes += [close_of(day, (record,)) for day, record in zip(other_days, other_records, strict=True)]
    close_of_day = spread(len(closes), lambda client, i: client.post("daily-close", closes[i]))
    assert [r.status_code for r in close_of_day] == [202] * len(closes)

    days = [DUPLICATED_DAY, VERSIONS_DAY, *other_days]
    results = {day: wait_for_result(partner, "S1", day, RESULT_TIMEOUT) for day in days}
    assert {day: r["status"] for day, r in results.items()} == dict.fromkeys(days, "MATCHED"), results
    time.sleep(5)  # several polls of every queue trigger: nothing may reconcile a close again
    for client in via:  # every instance answers the same result, unchanged
        assert {day: client.get(f"daily-close/S1/{day}").json() for day in days} == results
    by_host = reconciliations(hosts, partner.partner_id)
    assert Counter(day for _, day in by_host.elements()) == dict.fromkeys(days, 1), by_host

    answers = Counter(
        r.status_code for r in [*batch_answers, *version_answers, *close_answers, *batch_of_day, *close_of_day]
    )
    reconciled_by = Counter(number for number, _ in by_host.elements())
    skipped = sum(host.log().count("has its result already") for host in hosts)
    print(
        f"\n{instances.backend}: {len(hosts)} instances; requests {sum(answers.values())} ({dict(answers)}); "
        f"{DUPLICATES} duplicates of a batch and of a close, {VERSIONS} versions (stored: {VERSIONS}); "
        f"{len(days)} closes all MATCHED, each reconciled once, by instance "
        f"{[reconciled_by[n] for n in range(len(hosts))]}; duplicate messages left alone: {skipped}"
    )
