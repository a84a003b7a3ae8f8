"""`make chaos`: partners push business days while the local host is killed with SIGKILL again and again
(decision 0071). Loopback only, bounded in time.

A local host of its own (loadtest/host.py: a temporary SQLite folder, or with CHAOS_BACKEND=azure the
Cosmos DB and Azurite emulators, which keep running across kills) serves clients that push business days
as the load run's workload does (loadtest/workload.py: trade-record batches, some records corrected in a
newer version, resends, a daily close with the totals of what was sent, reads). Meanwhile the controller
(loadtest/chaos_kills.py) kills the host, at named steps in the middle of writes and at random moments, and
starts it again on the same data. A client resends every request that got no answer (refused, reset,
timed out) or a 5xx, with the same body and so the same batch_id, until it is answered, as a partner would.

At the end each client closes its open day, the host runs unarmed, and every close is awaited until it is
reconciled (a 1 s delay, a sweep every 5 s, messages hidden 3 s after a kill). Each result's `actual` is
compared with the totals the client computed from what it sent (latest versions): records lost, records
counted twice, closes stuck (not MATCHED), closes whose totals differ in any field. It exits non-zero on any
of these, on any request answered wrongly, or on fewer kills than CHAOS_MIN_KILLS (a run that has fewer after
CHAOS_SECONDS goes on until it has them, at most twice as long).

Settings (environment): CHAOS_SECONDS (120; 180 on azure), CHAOS_BACKEND (sqlite | azure), CHAOS_MIN_KILLS (30),
CHAOS_PARTNERS (2), CHAOS_STORES_PER_PARTNER (2, one client each), CHAOS_SEED (1), CHAOS_DRAIN_SECONDS
(180), CHAOS_JSON (a path to write the figures to), CHAOS_KEEP (keep the work folder),
COSMOS_INDEX_PARTITION_MAX_ENTRIES (16 here: the record index grows during the run; on azure a run whose
partners sent more records than their 16 first nodes hold, and in which no node closed, fails).
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import platform
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from loadtest.chaos_kills import Kills, Plan, control, kill_points
from loadtest.client import Client
from loadtest.host import onboard, prepare_host
from loadtest.index_growth import CHAOS_MAX_ENTRIES, growth_due, index_nodes_closed
from loadtest.report import reconciliation_events
from loadtest.workload import Request, Worker

# Short enough that a run's closes are all reconciled within its drain, after any number of kills.
HOST_SETTINGS = {
    "RECONCILE_DELAY_SECONDS": "1",
    "RECONCILE_SWEEP_GRACE_SECONDS": "5",
    "RECONCILE_SWEEP_SCHEDULE": "*/5 * * * * *",
    "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:03",
    "COSMOS_INDEX_PARTITION_MAX_ENTRIES": os.environ.get("COSMOS_INDEX_PARTITION_MAX_ENTRIES") or CHAOS_MAX_ENTRIES,
}
TOTALS = (
    "trade_record_count",
    "item_row_count",
    "payment_row_count",
    "net_sales_amount",
    "tax_amount",
    "tip_amount",
    "payment_total_amount",
)


@dataclass(frozen=True)
class Pace:
    """The size of the clients' batches and how long the host lives between kills (loadtest/chaos_kills.py)."""

    batch_size: tuple[int, int]
    random_seconds: tuple[float, float]  # a life ended at a random moment, after /health answers
    armed_seconds: tuple[float, float]  # a life armed at a point waits this long for it


# The Cosmos DB emulator (one Node.js process, every write a request) takes seconds for a batch of 200 on
# two loaded cores, and the host seconds to start on it: smaller batches and longer lives there, so that
# batches still complete between kills.
PACES = {
    "sqlite": Pace((20, 200), (0.3, 3.0), (2.0, 6.0)),
    "azure": Pace((5, 50), (1.0, 6.0), (5.0, 15.0)),
}
RESEND_PAUSE = 0.2  # seconds between resends while the host is down
MAX_ATTEMPTS = 600  # about two minutes of resends: a host down longer than that is a failure


@dataclass
class Ledger:
    """What the clients sent, how often they had to resend, and the totals of every close they sent."""

    requests: int = 0
    resends: Counter = field(default_factory=Counter)  # attempts after the first, per endpoint
    requests_resent: int = 0
    errors: list[str] = field(default_factory=list)
    closes: dict[tuple[str, str], dict] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answered(self, request: Request, status: int | None, body: bytes, attempts: int) -> None:
        error = _wrong_answer(request, status, body, attempts)
        with self.lock:
            self.requests += 1
            self.requests_resent += attempts > 1
            self.resends[request.endpoint] += attempts - 1
            if error:
                self.errors.append(f"{request.endpoint}: {error}")
            elif request.endpoint == "POST daily-close":
                close = json.loads(request.body or b"{}")
                self.closes[(close["store_id"], close["business_date"])] = {name: close[name] for name in TOTALS}


def _wrong_answer(request: Request, status: int | None, body: bytes, attempts: int) -> str | None:
    if status is None:
        return f"no answer after {attempts} attempts"
    expected = request.expect
    if attempts > 1 and request.method in ("POST", "PUT"):
        expected += (200,)  # the attempt the host died under may have committed: ALREADY_RECEIVED
    if status not in expected:
        return f"HTTP {status} after {attempts} attempts: {body[:300].decode(errors='replace')}"
    if status == 200 and request.records and json.loads(body)["record_count"] != request.records:
        return f"ALREADY_RECEIVED with record_count {json.loads(body)['record_count']}, sent {request.records}"
    return None


def deliver(client: Client, request: Request, ledger: Ledger) -> None:
    """Send until answered: no answer or a 5xx is sent again, the same bytes (so the same batch_id)."""
    attempts, status, body = 0, None, b""
    while attempts < MAX_ATTEMPTS:
        attempts += 1
        try:
            status, body = client.send(request)
        except (OSError, http.client.HTTPException):
            status = None
        if status is not None and status < 500:
            break
        time.sleep(RESEND_PAUSE)
    ledger.answered(request, status if status is not None and status < 500 else None, body, attempts)


def drive(worker: Worker, port: int, stop: threading.Event, ledger: Ledger) -> None:
    client = Client(port, worker.key)
    for request in worker.setup_requests():
        deliver(client, request, ledger)
    while not stop.is_set():
        deliver(client, worker.next_request(), ledger)
    last = worker.close_day()  # every record sent ends in a closed day
    if last is not None:
        deliver(client, last, ledger)


def _equal(name: str, sent, actual) -> bool:
    if name.endswith("_count"):
        return sent == actual
    return actual is not None and Decimal(sent) == Decimal(actual)


@dataclass
class Verdict:
    """Every close's result against the totals its client sent."""

    closes: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    records_sent: int = 0
    records_counted: int = 0
    lost: int = 0
    doubled: int = 0
    stuck: list[str] = field(default_factory=list)  # store/date and status of each close not MATCHED
    differing: list[str] = field(default_factory=list)  # store/date and fields where actual != sent

    def check(self, where: str, sent: dict | None, result: dict) -> None:
        self.statuses[result["status"]] = self.statuses.get(result["status"], 0) + 1
        if result["status"] != "MATCHED":
            self.stuck.append(f"{where} {result['status']}")
        actual = result.get("actual")
        if sent is None or actual is None:
            return
        self.records_sent += sent["trade_record_count"]
        self.records_counted += actual["trade_record_count"]
        self.lost += max(0, sent["trade_record_count"] - actual["trade_record_count"])
        self.doubled += max(0, actual["trade_record_count"] - sent["trade_record_count"])
        differ = [name for name in TOTALS if not _equal(name, sent[name], actual.get(name))]
        if differ:
            self.differing.append(f"{where}: {', '.join(differ)}")


def verify(workers: list[Worker], port: int, ledger: Ledger, timeout: float) -> Verdict:
    """Wait for every close to be reconciled, then compare each result with the client's own totals."""
    deadline = time.monotonic() + timeout
    verdict = Verdict(closes=len(ledger.closes))
    for worker in workers:
        client = Client(port, worker.key)
        for day in worker.closed_days:
            path = f"daily-close/{worker.store_id}/{day.isoformat()}"
            while True:
                status, body = client.send(Request("GET daily-close", "GET", path, None, (200,)))
                result = json.loads(body) if status == 200 else {"status": f"HTTP {status}"}
                if result["status"] in ("MATCHED", "MISMATCHED") or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
            where = f"{worker.store_id}/{day.isoformat()}"
            verdict.check(where, ledger.closes.get((worker.store_id, day.isoformat())), result)
    return verdict


def run(
    backend: str,
    seconds: float,
    *,
    partners: int = 2,
    stores: int = 2,
    seed: int = 1,
    min_kills: int = 30,
    drain_seconds: float = 180,
    first_kills: Sequence[tuple[str, float]] = (),
    until_kills: int | None = None,
    pace: Pace | None = None,
    work: Path | None = None,
) -> dict:
    """One chaos run; the figures, with `failures` empty when nothing was lost, doubled or stuck.
    `first_kills`: the points the first lives are armed at, in order, before the plan's own choices;
    `until_kills`: end after that many kills, if `seconds` have not passed before (a test's short run)."""
    pace = pace or PACES[backend]
    work = work or Path(tempfile.mkdtemp(prefix="pos-chaos-"))
    began = time.monotonic()
    host = prepare_host(work, backend, **HOST_SETTINGS)
    try:
        if not host.launch():
            raise RuntimeError(f"the host exited at start:\n{host.log_path.read_text(errors='replace')}")
        workers = onboard(host, partners, stores, seed)
        for worker in workers:
            worker.batch_size = pace.batch_size
        ledger, kills, stop = Ledger(), Kills(), threading.Event()
        plan = Plan(kill_points(backend), random.Random(seed), first_kills, pace.random_seconds, pace.armed_seconds)
        started = time.monotonic()
        clients = [threading.Thread(target=drive, args=(w, host.port, stop, ledger), daemon=True) for w in workers]
        for thread in clients:
            thread.start()
        controller_error: list[BaseException] = []

        def controller() -> None:
            try:
                control(host, plan, stop, kills, until_kills)
            except BaseException as error:  # reported with the figures
                controller_error.append(error)
                stop.set()

        killer = threading.Thread(target=controller, daemon=True)
        killer.start()
        killer.join(seconds)  # returns early once `until_kills` kills are done
        # Fewer kills than asked in that time (a slow machine, armed points slow to come): on until there are
        # enough, at most as long again, rather than a run that lost nothing failing for want of kills.
        extended = time.monotonic() + seconds
        while killer.is_alive() and kills.total < min_kills and time.monotonic() < extended:
            killer.join(0.5)
        stop.set()
        killer.join(120)
        for thread in clients:
            thread.join(MAX_ATTEMPTS * RESEND_PAUSE + 60)
        pushed = time.monotonic() - started
        checked = verify(workers, host.port, ledger, drain_seconds) if not controller_error else None
        figures = _figures(backend, seconds, pushed, time.monotonic() - started, kills, ledger, checked)
        figures["setup_s"] = round(started - began, 1)  # emulators, host, partners onboarded with hq
        log = host.log_path.read_text(errors="replace")
        events = reconciliation_events(log)
        figures["reconciliations_postponed"] = len(events["postponed_before_commit"])
        figures["closes_swept"] = events["swept"]
        figures["messages_poisoned"] = len(re.findall(r"message \S+ moved to \S+-poison", log))
        if backend == "azure":  # the record index grew while the host was killed (decision 0115)
            figures["index_nodes_closed"] = index_nodes_closed(host.env)
            figures["index_growth_due"] = growth_due(figures.get("records_sent", 0), partners, host.env)
        figures["failures"] = _failures(figures, min_kills, controller_error)
        return figures
    finally:
        host.stop()


def _figures(backend, seconds, pushed, elapsed, kills: Kills, ledger: Ledger, checked: Verdict | None) -> dict:
    restarts = sorted(kills.restarts_seconds)
    return {
        "backend": backend,
        "seconds": seconds,
        "pushing_s": round(pushed, 1),
        "duration_s": round(elapsed, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "kills": kills.total,
        "kills_by_point": dict(kills.by_point.most_common()),
        "armed_not_reached": dict(kills.unreached.most_common()),  # those lives ended at a random moment
        "restart_s_median": round(restarts[len(restarts) // 2], 2) if restarts else None,
        "requests": ledger.requests,
        "requests_resent": ledger.requests_resent,
        "resends": sum(ledger.resends.values()),
        "resends_by_endpoint": {endpoint: count for endpoint, count in ledger.resends.most_common() if count},
        "errors": ledger.errors[:20],
        "error_count": len(ledger.errors),
        **(dataclasses.asdict(checked) if checked else {}),
    }


def _failures(figures: dict, min_kills: int, controller_error: list[BaseException]) -> list[str]:
    failures = [f"the controller failed: {error}" for error in controller_error]
    if figures["kills"] < min_kills:
        failures.append(f"{figures['kills']} kills, fewer than {min_kills}")
    if figures["error_count"]:
        failures.append(f"{figures['error_count']} requests answered wrongly")
    if figures.get("index_growth_due") and figures.get("index_nodes_closed") == 0:
        failures.append("the record index never grew (COSMOS_INDEX_PARTITION_MAX_ENTRIES)")
    for name in ("lost", "doubled"):
        if figures.get(name):
            failures.append(f"{figures[name]} records {name}")
    for name in ("stuck", "differing"):
        if figures.get(name):
            failures.append(f"{len(figures[name])} closes {name}")
    if not figures.get("closes"):
        failures.append("no daily close was sent")
    return failures


def print_report(figures: dict) -> None:
    print(f"\nChaos run on {figures['backend']} ({figures['machine']}), {figures['duration_s']} s in all:")
    print(f"  kills (SIGKILL): {figures['kills']}, median restart {figures['restart_s_median']} s")
    for point, count in figures["kills_by_point"].items():
        print(f"    {point:<28} {count}")
    if figures["armed_not_reached"]:
        print(
            f"  armed lives whose point did not come in time (killed at a random moment instead): "
            f"{figures['armed_not_reached']}"
        )
    print(
        f"  requests answered: {figures['requests']}; {figures['requests_resent']} of them resent "
        f"({figures['resends']} resends: {figures['resends_by_endpoint']})"
    )
    if figures.get("statuses") is not None:
        print(
            f"  daily closes: {figures['closes']}, results {figures['statuses']}; trade records sent "
            f"{figures['records_sent']}, counted {figures['records_counted']}"
        )
        print(
            f"  lost {figures['lost']}, doubled {figures['doubled']}, stuck {len(figures['stuck'])}, "
            f"totals differing {len(figures['differing'])}"
        )
    print(
        f"  reconciliation messages ahead of their close's commit (postponed): "
        f"{figures.get('reconciliations_postponed')}, closes re-sent by the sweep: {figures.get('closes_swept')}, "
        f"messages poisoned: {figures.get('messages_poisoned')}"
    )
    if "index_nodes_closed" in figures:
        print(
            f"  record index nodes closed: {figures['index_nodes_closed']}, growth due: {figures['index_growth_due']}"
        )
    for line in figures["errors"] + figures.get("stuck", [])[:20] + figures.get("differing", [])[:20]:
        print(f"    {line}")
    print("\nRESULT: " + ("FAIL: " + "; ".join(figures["failures"]) if figures["failures"] else "PASS"), flush=True)


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def main() -> int:
    backend = (os.environ.get("CHAOS_BACKEND") or "sqlite").lower()
    # Lives on the emulators are longer (a restart and a batch take seconds there): 180 s give the 30 kills.
    seconds = float(os.environ.get("CHAOS_SECONDS") or (180 if backend == "azure" else 120))
    work = Path(tempfile.mkdtemp(prefix="pos-chaos-"))
    print(f"Chaos run ({backend}, {seconds:.0f} s of kills) in {work} ...", flush=True)
    try:
        figures = run(
            backend,
            seconds,
            partners=_int("CHAOS_PARTNERS", 2),
            stores=_int("CHAOS_STORES_PER_PARTNER", 2),
            seed=_int("CHAOS_SEED", 1),
            min_kills=_int("CHAOS_MIN_KILLS", 30),
            drain_seconds=float(os.environ.get("CHAOS_DRAIN_SECONDS") or 180),
            work=work,
        )
    finally:
        if os.environ.get("CHAOS_KEEP"):
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print_report(figures)
    if os.environ.get("CHAOS_JSON"):
        Path(os.environ["CHAOS_JSON"]).write_text(json.dumps(figures, indent=2))
    return 1 if figures["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
