"""`hq dashboard`: HQ's read-only web dashboard, served on 127.0.0.1 from the same settings as `hq`.

The package: a read model per page (overview.py, store_day.py, profile.py, operations.py: functions of
the storage ports returning plain data), HTML rendering (layout.py, grid_pages.py, detail_pages.py,
charts.py for the SVG charts) and the HTTP server (server.py). This module is the command group; it
imports the rest when the command runs, so that building `hq`'s parser stays cheap.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from backends.factory import open_storage
from backends.queues import open_reconcile_queue
from core.ports import Storage
from core.queue_ports import QueueConsumer
from core.settings import Settings
from core.webhook_ports import WebhookStore
from hq.arguments import Subcommands

DEFAULT_PORT = 8071


@dataclass(frozen=True)
class Sources:
    """What the dashboard reads: storage, and the reconciliation queue (None when it cannot be opened:
    the operations page says why, and every other page works)."""

    storage: Storage
    queue: QueueConsumer[Any] | None  # Any: each queue adapter has its own message class
    queue_problem: str = ""
    webhooks: WebhookStore | None = None


def open_sources(settings: Settings) -> Sources:
    from backends.webhook_backend import open_webhook_store

    storage = open_storage(settings)
    webhooks = open_webhook_store(settings, storage)
    try:
        return Sources(storage, open_reconcile_queue(settings), webhooks=webhooks)
    except ValueError as problem:  # Azure: no queue setting (AzureWebJobsStorage or its __accountName)
        return Sources(storage, None, str(problem), webhooks)


def add_group(groups: Subcommands) -> None:
    command = groups.add_parser(
        "dashboard",
        help="serve HQ's read-only web dashboard on 127.0.0.1 (overview, store-days, partners, operations)",
    )
    command.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free one)",
    )
    command.set_defaults(opens=open_sources, run=serve)


def serve(sources: Sources, args: argparse.Namespace) -> None:
    from hq.dashboard.server import Dashboard, DashboardServer

    server = DashboardServer(
        Dashboard(sources.storage, sources.queue, sources.queue_problem, webhooks=sources.webhooks), args.port
    )
    print(f"HQ dashboard on {server.url} (read-only; Ctrl+C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
