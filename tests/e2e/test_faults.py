"""Crashes at every step: a failure injected at each fault point (core/faults.py; devhost/fault_injection.py
lists them), on SQLite with its queue and on Cosmos DB with Azure Storage Queue (emulators), through the use
cases the HTTP and queue functions call (the real code path minus HTTP).

A business is played twice on fresh partners: once without failure, once with a failure injected at
one (point, flow, hit). After a failure the partner retries the same request, the queue delivers the
message again, the timer runs the sweep again. The stored state (masters, mapping, rows of every
store-day, batch entries, markers, closes and their results) must then be exactly the one the run
without failure left, and the queue empty. Every hit of every point is failed in turn, so a point
added to devhost/fault_injection.POINTS is tested without touching this file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from backends.azure_queue import AzureQueue
from backends.cosmos.storage import CosmosStorage
from backends.sqlite.delayed_queue import SqliteQueue
from backends.sqlite.storage import SqliteStorage
from core import faults, reconcile_messages
from core.clock import utc_now
from core.ports import BackendUnavailable
from devhost import cosmos_throttling, fault_injection
from devhost.cosmos_throttling import ThrottlePlan
from devhost.fault_injection import POINTS, InjectedFault
from ingest.batches import BatchOutcome
from ingest.daily_close import post_daily_close
from ingest.mappings import put_mapping
from ingest.products import put_products
from ingest.stores import put_stores
from ingest.trade_records import post_trade_records
from reconcile.service import reconcile, sweep
from tests.conftest import make_partner, start_host
from tests.payloads import (
    mapping_batch,
    modifier_group,
    problem_of,
    product,
    products_batch,
    store,
    stores_batch,
)
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

ROOT = Path(__file__).resolve().parents[2]
DAY, DAY2 = "2026-11-20", "2026-11-21"
DATE, DATE2 = dt.date.fromisoformat(DAY), dt.date.fromisoformat(DAY2)
DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
VISIBILITY = 1  # seconds a failed message stays hidden before it is delivered again (Azure's minimum)
MAX_HITS = 8  # the most hits of one point in one flow that are failed in turn


# -- the business played in every run: the same bodies, so the same batch_ids, for every partner ----


def _json(body: dict) -> bytes:
    return orjson.dumps(body)


def _business() -> dict[str, bytes]:
    moved_at = "2026-11-21T12:00:00-05:00"
    a1 = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], tax=44)
    b1 = trade_record("S1", DAY, [Line("P-COLA", 2, 199)], tax=32)
    c1 = trade_record("S1", DAY, [Line("P-FRIES", 1, 299)], tax=24, source_type="03")  # unmapped at first
    b2 = trade_record(
        "S1",
        DAY,
        [Line("P-COLA", 3, 199)],
        tax=48,
        version=2,
        trade_record_id=b1["trade_record_id"],
        last_modified_at="2026-11-20T21:00:00Z",
    )
    d1 = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88)
    a2 = trade_record(
        "S1",
        DAY2,
        [Line("P-BURGER", 1, 550)],
        tax=44,
        version=2,  # moves to the next day
        trade_record_id=a1["trade_record_id"],
        opened_at=moved_at,
        last_modified_at="2026-11-21T18:00:00Z",
    )
    e1 = trade_record("S1", DAY2, [Line("P-COLA", 1, 199)], tax=16, opened_at=moved_at)
    # late: a new version of d1 (same amounts) after the day's reconciliation reopens it once
    d2 = trade_record(
        "S1",
        DAY,
        [Line("P-BURGER", 2, 550)],
        tax=88,
        version=2,
        trade_record_id=d1["trade_record_id"],
        last_modified_at="2026-11-22T09:00:00Z",
    )
    revenue = {"01", "03"}  # the partner counts 03 as a sale; HQ learns it from the second mapping
    return {
        "stores": _json(stores_batch(store("S1"))),
        "products": _json(
            products_batch(
                [product("P-BURGER"), product("P-COLA", modifier_group_ids=[])], [modifier_group("G-CHEESE")]
            )
        ),
        "mapping_1": _json(mapping_batch(("01", "SALE"), ("02", "REFUND"))),
        "records_1": _json(trade_batch("S1", DAY, [a1, b1, c1], batch_seq=1)),
        "records_2": _json(trade_batch("S1", DAY, [b2, d1, c1], batch_seq=2)),  # c1 resent unchanged
        "records_3": _json(trade_batch("S1", DAY2, [a2, e1], batch_seq=1)),
        "records_late": _json(trade_batch("S1", DAY, [d2], batch_seq=3)),
        "close_day": _json(daily_close("S1", DAY, totals_of([b2, c1, d1], revenue, DIRECTIONS), batch_count=2)),
        "close_day2": _json(daily_close("S1", DAY2, totals_of([a2, e1], revenue, DIRECTIONS))),
        "mapping_2": _json(mapping_batch(("01", "SALE"), ("02", "REFUND"), ("03", "SALE"))),
    }


BODIES = _business()
BATCH_IDS = [orjson.loads(body)["batch_id"] for body in BODIES.values()]


# -- backends ---------------------------------------------------------------------------------------


@dataclass
class Backend:
    kind: str
    storage: object
    queue: object
    throttling: ThrottlePlan | None = None  # Cosmos DB answering 429 on some calls (devhost/cosmos_throttling.py)
    retried_after_429: int = 0  # steps and messages that met a 429 and were retried

    def after_retry_after(self, retry: bool):
        """A retry after a 429 runs once Retry-After is over: the partition has room again (the plan
        throttles nothing inside). A first attempt meets the plan."""
        return self.throttling.paused() if retry and self.throttling is not None else contextlib.nullcontext()


class LostQueue:
    """A queue that loses every message: what the sweep exists for."""

    def send(self, body: str, delay_seconds: int = 0) -> None:
        pass


def open_backend(kind: str, request, tmp_path: Path) -> Backend:
    if kind == "sqlite":
        directory = tmp_path / f"sqlite-{uuid.uuid4().hex[:8]}"
        return Backend(kind, SqliteStorage(directory), SqliteQueue(directory, "reconcile-requests"))
    azurite = request.getfixturevalue("azurite")
    queue = AzureQueue(f"faults-{uuid.uuid4().hex[:16]}", connection_string=azurite.connection_string)
    return Backend(kind, request.getfixturevalue("cosmos_storage"), queue)


# -- playing the business ---------------------------------------------------------------------------


def drain(backend: Backend) -> None:
    """The queue trigger, as the host runs it: a message is deleted once its function returns; a failure
    leaves it hidden for the visibility timeout, after which it is delivered again."""
    failed: set[str] = set()
    throttled: set[str] = set()  # delivered again after a 429: once Retry-After is over
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        message = backend.queue.receive(VISIBILITY)
        if message is None:
            if not failed:
                return
            time.sleep(0.1)
            continue
        try:
            with backend.after_retry_after(message.message_id in throttled):
                reconcile(backend.storage, reconcile_messages.decode(message.body))
        except InjectedFault:
            failed.add(message.message_id)
            continue
        except BackendUnavailable as error:
            assert error.retry_after_seconds is not None and message.message_id not in throttled, error
            backend.retried_after_429 += 1
            failed.add(message.message_id)
            throttled.add(message.message_id)
            continue
        failed.discard(message.message_id)
        backend.queue.delete(message)
    raise AssertionError(f"messages still failing after a minute: {failed}")


@dataclass(frozen=True)
class Step:
    flow: str  # the flow a fault point names; the fault is armed only during its steps
    run: Callable[[Backend, object], object]


def _batch(use_case, name: str) -> Callable:
    return lambda backend, partner: use_case(backend.storage, partner, BODIES[name])


def _records(name: str) -> Callable:
    return lambda backend, partner: post_trade_records(backend.storage, backend.queue, partner, BODIES[name], 0)


def _mapping(name: str) -> Callable:
    return lambda backend, partner: put_mapping(backend.storage, backend.queue, partner, BODIES[name])


def _close(name: str, lost: bool = False) -> Callable:
    return lambda backend, partner: post_daily_close(
        backend.storage, LostQueue() if lost else backend.queue, partner, BODIES[name], 0
    )


def _drain(backend: Backend, partner) -> None:
    drain(backend)


def _sweep(backend: Backend, partner) -> bool:
    # whether it found work: how much depends on the failure (a reopened day's lost message adds one)
    return sweep(backend.storage, backend.queue, grace_seconds=0) > 0


STEPS = [
    Step("stores", _batch(put_stores, "stores")),
    Step("products", _batch(put_products, "products")),
    Step("setup", _mapping("mapping_1")),
    Step("setup", _records("records_1")),
    Step("trade-records", _records("records_2")),  # a new version in its day, a resend
    Step("trade-records", _records("records_3")),  # a version moving to another day
    Step("daily-close", _close("close_day")),
    Step("setup", _close("close_day2", lost=True)),  # its message is lost
    Step("reconcile", _drain),  # 03 is unmapped: MISMATCHED
    Step("mappings", _mapping("mapping_2")),  # re-runs the day: MATCHED
    Step("setup", _drain),
    Step("trade-records", _records("records_late")),  # reopens the checked day (MATCHED), sends its message
    Step("setup", _drain),
    Step("sweep", _sweep),  # finds the close whose message was lost (and a reopened day whose message was)
    Step("setup", _drain),
]
FLOWS = {step.flow for step in STEPS} - {"setup"}


def new_partner(storage):
    partner_id = f"f-{uuid.uuid4().hex[:10]}"
    storage.add_partner(partner_id, "Crash test partner", utc_now())
    storage.register_stores(partner_id, ["S1"], utc_now())
    return storage.get_partner(partner_id)


def play(
    backend: Backend, fault: tuple[str, str, int] | None = None, partner=None
) -> tuple[str, list, fault_injection.Fault | None]:
    """Play the business on a new partner; with `fault` = (point, flow, skip), that point fails once
    during the steps of that flow, after `skip` hits. A failed step is retried as the partner, the
    queue or the timer would retry it. Returns the partner, each step's answer and the fault."""
    partner = partner or new_partner(backend.storage)
    answers: list = []
    armed = None
    flow_steps = [index for index, step in enumerate(STEPS) if fault and step.flow == fault[1]]
    try:
        for index, step in enumerate(STEPS):
            if flow_steps and index == flow_steps[0]:
                armed = fault_injection.arm(fault[0], skip=fault[2])
            for attempt in range(2):
                try:
                    with backend.after_retry_after(attempt > 0):
                        answers.append(step.run(backend, partner))
                    break
                except InjectedFault:
                    assert attempt == 0, "an armed point fails once"
                except BackendUnavailable as error:  # a 429 the SDK gave up on: the caller retries
                    assert attempt == 0 and error.retry_after_seconds is not None, error
                    backend.retried_after_429 += 1
            if flow_steps and index == flow_steps[-1]:
                fault_injection.disarm(fault[0])
    finally:
        fault_injection.disarm()
    return partner.partner_id, answers, armed


def snapshot(backend: Backend, partner_id: str) -> dict:
    """What a partner's business left in storage, without its ids and clocks."""
    storage = backend.storage
    days = [("S1", DATE), ("S1", DATE2)]

    def close(store_id, day):
        found = storage.get_closed_day(partner_id, store_id, day)
        if found is None:
            return None
        # revision counts changes (a retry may count one more), it is not an outcome
        return dataclasses.replace(
            found, received_at=None, due_at=None, checked_at=found.checked_at is not None, revision=0
        )

    def marker(batch_id):
        found = storage.find_batch(partner_id, batch_id)
        return None if found is None else dataclasses.replace(found, partner_id="", received_at=None)

    mapping = storage.get_mapping(partner_id)
    return {
        "store": storage.get_store(partner_id, "S1"),
        "products": [storage.get_product(partner_id, product_id, None) for product_id in ("P-BURGER", "P-COLA")],
        "mapping": (mapping.batch_id, mapping.entries),
        "rows": {
            day: sorted(storage.store_day_rows(partner_id, *day), key=lambda row: row.trade_record_id) for day in days
        },
        "batch_seqs": {day: storage.batch_seqs(partner_id, *day) for day in days},
        "closes": {day: close(*day) for day in days},
        "markers": {batch_id: marker(batch_id) for batch_id in BATCH_IDS},
    }


def summary(answer) -> object:
    """What the partner was told that must not depend on a failure: a batch's record_count (its status
    may be ALREADY_RECEIVED when the first attempt failed after committing)."""
    if isinstance(answer, BatchOutcome):
        return answer.record_count
    return answer


_clean: dict[str, tuple[dict, list]] = {}


def clean_run(kind: str, request, tmp_path) -> tuple[dict, list]:
    if kind not in _clean:
        backend = open_backend(kind, request, tmp_path)
        partner_id, answers, _ = play(backend)
        _clean[kind] = (snapshot(backend, partner_id), answers)
    return _clean[kind]


# -- the tests ----------------------------------------------------------------------------------------

CASES = [
    pytest.param(point.name, flow, kind, id=f"{kind}-{flow}-{point.name}")
    for point in POINTS
    for flow in point.flows
    for kind in ("sqlite", "azure")
    if point.adapter is None or point.adapter == {"sqlite": "sqlite", "azure": "cosmos"}[kind]
]


def test_every_flow_of_the_business_is_a_flow_of_some_point():
    assert FLOWS == {flow for point in POINTS for flow in point.flows}


@pytest.mark.parametrize("kind", ["sqlite", "azure"])
def test_the_run_without_failure_is_what_the_business_expects(kind, request, tmp_path):
    state, _ = clean_run(kind, request, tmp_path)
    day, day2 = state["closes"][("S1", DATE)], state["closes"][("S1", DATE2)]
    assert (day.status, day.details["mapped_source_codes"]) == ("MATCHED", {"01": "SALE", "03": "SALE"})
    assert day2.status == "MATCHED"  # its message was lost: the sweep sent it again
    assert sorted(row.version for row in state["rows"][("S1", DATE)]) == [1, 2, 2]  # d1 came again late
    assert sorted(row.version for row in state["rows"][("S1", DATE2)]) == [1, 2]
    assert state["batch_seqs"] == {("S1", DATE): [1, 2, 3], ("S1", DATE2): [1]}
    assert all(marker is not None for marker in state["markers"].values())


@pytest.mark.parametrize("point, flow, kind", CASES)
def test_a_failure_at_each_step_converges_after_the_retry(point, flow, kind, request, tmp_path):
    expected_state, expected_answers = clean_run(kind, request, tmp_path)
    backend = open_backend(kind, request, tmp_path)
    for skip in range(MAX_HITS):
        partner_id, answers, fault = play(backend, (point, flow, skip))
        if skip == 0:
            assert fault is not None and fault.fired == 1, f"{point} is never reached in the {flow} flow"
        elif fault.fired == 0:
            break  # every hit of the point in this flow has failed once
        assert [summary(a) for a in answers] == [summary(a) for a in expected_answers], (point, flow, skip)
        assert snapshot(backend, partner_id) == expected_state, (point, flow, skip)
        assert backend.queue.receive(VISIBILITY) is None


# -- Cosmos DB throttling (429) ----------------------------------------------------------------------

THROTTLED_FRACTION = 0.1  # of the adapter's calls, each answered 429 (seeded: a failure can be replayed)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_business_converges_when_cosmos_db_throttles(seed, request, tmp_path, cosmos_emulator, azurite):
    """The whole business on Cosmos DB answering 429 on a tenth of its calls (after the SDK's retries):
    each request, reconciliation, re-run and sweep that meets one is retried as its caller would after
    Retry-After, and everything ends as the run without failure: same answers, same state, queue empty."""
    expected_state, expected_answers = clean_run("azure", request, tmp_path)
    plan = ThrottlePlan(fraction=THROTTLED_FRACTION, seed=seed, retry_after_ms=1200)
    with cosmos_throttling.installed(plan):
        storage = CosmosStorage(
            cosmos_emulator.endpoint,
            f"faults-429-{uuid.uuid4().hex[:8]}",
            key=cosmos_emulator.key,
            create_containers=True,
        )
    queue = AzureQueue(f"faults-{uuid.uuid4().hex[:16]}", connection_string=azurite.connection_string)
    backend = Backend("azure-429", storage, queue, plan)
    try:
        with plan.paused():
            partner = new_partner(storage)
        partner_id, answers, _ = play(backend, partner=partner)
        assert plan.injected >= 5 and backend.retried_after_429 >= 5, (plan.injected, backend.retried_after_429)
        assert [summary(a) for a in answers] == [summary(a) for a in expected_answers]
        with plan.paused():
            assert snapshot(backend, partner_id) == expected_state
        assert backend.queue.receive(VISIBILITY) is None
    finally:
        storage.close()


# -- the mechanism ------------------------------------------------------------------------------------

SOURCES = [
    path
    for folder in ("backends", "core", "devhost", "hq", "ingest", "reconcile", "reference", "triggers")
    for path in (ROOT / folder).rglob("*.py")
] + [ROOT / "function_app.py"]


def test_every_listed_point_is_in_the_code_and_every_point_in_the_code_is_listed():
    placed = {
        name for path in SOURCES for name in re.findall(r'faults\.point\("([^"]+)"\)', path.read_text(encoding="utf-8"))
    }
    assert placed == fault_injection.NAMES


def test_only_the_local_host_arms_faults_from_outside():
    arming = re.compile(r"fault_injection\.(arm|arm_from_text|arm_kills_from_text|injected)\(|POS_FAULTS")
    users = {
        path.relative_to(ROOT).as_posix()
        for path in SOURCES
        if path.name != "fault_injection.py" and arming.search(path.read_text(encoding="utf-8"))
    }
    assert users == {"devhost/__main__.py"}


def test_only_the_fault_injection_installs_a_hook_and_the_app_runs_without_one():
    installs = {
        path.relative_to(ROOT).as_posix() for path in SOURCES if "faults.install(" in path.read_text(encoding="utf-8")
    }
    assert installs == {"devhost/fault_injection.py"}
    fault_injection.disarm()
    assert faults._hook is None  # nothing armed: the points call nothing
    with fault_injection.injected("batch.validated"):
        assert faults._hook is not None
    assert faults._hook is None


def test_a_point_does_nothing_unless_armed_and_fires_as_told():
    faults.point("batch.validated")  # nothing armed
    with fault_injection.injected("batch.validated", times=2, skip=1) as fault:
        faults.point("batch.validated")
        for _ in range(2):
            with pytest.raises(InjectedFault):
                faults.point("batch.validated")
        faults.point("batch.validated")
    assert (fault.reached, fault.fired) == (4, 2)
    faults.point("batch.validated")  # disarmed on leaving the block
    with pytest.raises(ValueError):
        fault_injection.arm("no.such.point")


def test_pos_faults_text_arms_points_with_counts():
    try:
        armed = fault_injection.arm_from_text("batch.validated:2, close.enqueued")
        assert [(f.name, f.times) for f in armed] == [("batch.validated", 2), ("close.enqueued", 1)]
        with pytest.raises(ValueError):
            fault_injection.arm_from_text("batch.validated:x")
        with pytest.raises(ValueError):
            fault_injection.arm_from_text("nothing.here")
    finally:
        fault_injection.disarm()


def test_the_local_host_arms_pos_faults_at_start_and_the_partner_retry_completes(tmp_path):
    host = start_host(tmp_path, POS_FAULTS="storage.data_written:1,batch.before_response:1")
    try:
        assert "FAULT INJECTION IS ON (POS_FAULTS): storage.data_written x1, batch.before_response x1" in host.log()
        partner = make_partner(host)
        body = stores_batch(store("S1"))

        def stored():
            return host.storage().find_batch(partner.partner_id, body["batch_id"])

        problem_of(partner.put("stores", body), 500, "INTERNAL_ERROR")  # failed inside the transaction
        assert stored() is None and host.storage().get_store(partner.partner_id, "S1") is None
        problem_of(partner.put("stores", body), 500, "INTERNAL_ERROR")  # committed, failed before answering
        assert stored() is not None
        retry = partner.put("stores", body)
        assert retry.status_code == 200, retry.text
        assert retry.json() == {
            "batch_id": body["batch_id"],
            "status": "ALREADY_RECEIVED",
            "record_count": 1,
            "warnings": [],
        }
    finally:
        host.stop()
