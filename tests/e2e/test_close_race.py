"""Decision 0046: a daily close whose reconciliation message is delivered before the close is committed.

The daily close sends its delayed message first and then commits the close (ingest/daily_close.py).
Under load, the commit can wait longer than the delay for SQLite's write lock. The worker used to find
no close of that batch_id, take the message for one of a replaced close, and delete it, so the close
committed afterwards as RECEIVED with no message left (one close of 72 after a 20 s `make load` run).
Now the worker tells "not committed yet" (no batch marker for the close) from "replaced" (a marker):
it fails the message, and the queue delivers it again after the visibility timeout.

The test forces that interleaving over real HTTP: the test process holds the host's database write
lock while the close is posted, so the close's message is sent and delivered while its commit waits,
and releases the lock only once the worker has dealt with that message.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time

import requests

from loadtest.report import reconciliation_events
from tests.conftest import LocalHost, make_partner, start_host
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

QUEUE = "reconcile-requests"


def queued(host: LocalHost, close_batch_id: str) -> list[tuple[int, str]]:
    """(dequeue_count, queue) of every message naming this close, hidden ones included."""
    path = host.data_dir / "queue.sqlite3"
    if not path.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as db:
        return db.execute(
            "SELECT dequeue_count, queue FROM queue_messages WHERE body LIKE ?", (f"%{close_batch_id}%",)
        ).fetchall()


def status_of(partner, business_date: str = DAY) -> str:
    return partner.get(f"daily-close/S1/{business_date}").json()["status"]


def post_close_while_its_commit_waits(host: LocalHost, partner, close: dict) -> requests.Response:
    """Post `close` while this process holds the database write lock, and let go once the worker has
    received the close's message (or, if none is sent before the commit, after a while)."""
    lock = sqlite3.connect(host.data_dir / "pos.sqlite3", timeout=30, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the close's commit now waits (busy_timeout); reads do not
    answer: dict = {}
    sender = threading.Thread(target=lambda: answer.update(response=partner.post("daily-close", close)))
    try:
        sender.start()
        seen, deadline = False, time.monotonic() + 20
        while time.monotonic() < deadline:
            messages = [m for m in queued(host, close["batch_id"]) if m[1] == QUEUE]
            if any(count >= 1 for count, _ in messages) or (seen and not messages):
                break  # received by the worker (and, as things are, already deleted)
            seen = seen or bool(messages)
            time.sleep(0.05)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
        sender.join(60)
    return answer["response"]


def reconciled_or_stranded(host: LocalHost, partner, close_batch_id: str, timeout: float = 90) -> str:
    """The close's final state: MATCHED/MISMATCHED, or STRANDED when it is RECEIVED with no message left
    that names it (nothing but the sweep would ever reconcile it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = status_of(partner)
        if before != "RECEIVED":
            return before
        pending = [m for m in queued(host, close_batch_id) if m[1] == QUEUE]
        after = status_of(partner)  # a message is deleted only after its result is saved
        if after != "RECEIVED":
            return after
        if not pending:
            return "STRANDED"
        time.sleep(0.2)
    return "RECEIVED"


def day_with_one_sale(partner) -> dict:
    open_store(partner)
    sale = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88)
    assert partner.post("trade-records", trade_batch("S1", DAY, [sale])).status_code == 202
    return daily_close("S1", DAY, totals_of([sale], {"01"}, DIRECTIONS))


def test_a_close_whose_message_is_delivered_before_its_commit_is_still_reconciled(tmp_path):
    host = start_host(tmp_path)  # the default sweep: 5 minutes past due, far beyond this test
    try:
        partner = make_partner(host)
        close = day_with_one_sale(partner)
        response = post_close_while_its_commit_waits(host, partner, close)
        assert response.status_code == 202, response.text
        assert reconciled_or_stranded(host, partner, close["batch_id"]) == "MATCHED"
    finally:
        host.stop()
    # The interleaving did happen, and what the load run reports from the host log (loadtest/report.py)
    # says so: the first delivery was postponed, the second reconciled the close.
    events = reconciliation_events(host.log())
    assert events["postponed_before_commit"] == [
        {"close_batch_id": close["batch_id"], "store_id": "S1", "business_date": DAY}
    ]
