"""The dashboard's web server: routes a GET to its read model and page, and serves it on 127.0.0.1.

`Dashboard.get` turns a request target into a response without any HTTP (tests call it directly); the
server around it (the standard library's ThreadingHTTPServer) binds to the loopback address only,
answers GET and nothing else (405), and refuses a Host header that is not this machine's loopback name,
so that a web page in the operator's browser cannot read the dashboard through a rebound DNS name.
Path segments are percent-decoded one by one, after splitting, so a store_id may hold a '/'.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from core.clock import utc_now
from core.ports import BackendUnavailable, Storage
from core.queue_ports import QueueConsumer
from core.webhook_ports import WebhookStore
from hq.dashboard import detail_pages, grid_pages
from hq.dashboard.attention import needs_attention
from hq.dashboard.day_transactions import day_transactions
from hq.dashboard.layout import SECURITY_HEADERS, problem_page
from hq.dashboard.operations import operations_view
from hq.dashboard.overview import (
    BadRequest,
    NotFound,
    across_partners,
    parse_date,
    parse_range,
    parse_status,
    partner_grid,
)
from hq.dashboard.profile import profile
from hq.dashboard.store_day import store_day
from hq.dashboard.transaction_pages import transactions_section
from hq.dashboard.webhooks_section import with_webhooks

log = logging.getLogger("hq.dashboard")
LOOPBACK_NAMES = {"127.0.0.1", "localhost"}


@dataclass(frozen=True)
class Response:
    status: int
    body: str


class Dashboard:
    """The pages over one storage (and the reconciliation queue, for the poison list)."""

    def __init__(
        self,
        storage: Storage,
        queue: QueueConsumer[Any] | None = None,
        queue_problem: str = "",
        now: Callable[[], dt.datetime] = utc_now,
        webhooks: WebhookStore | None = None,
    ) -> None:
        self.storage, self.queue, self.queue_problem, self.now = storage, queue, queue_problem, now
        self.webhooks = webhooks

    def get(self, target: str) -> Response:
        """The response to GET `target` (path and query): 200, or a plain 400/404/503 page."""
        split = urlsplit(target)
        try:
            segments = [unquote(segment, errors="strict") for segment in split.path.split("/")[1:]]
            query = {name: values[0] for name, values in parse_qs(split.query, keep_blank_values=True).items()}
            return Response(200, self._page(segments, query))
        except UnicodeDecodeError:
            return Response(400, problem_page(400, "the path is not percent-encoded UTF-8"))
        except BadRequest as error:
            return Response(400, problem_page(400, str(error)))
        except NotFound as error:
            return Response(404, problem_page(404, str(error)))
        except BackendUnavailable as error:
            return Response(503, problem_page(503, str(error)))

    def _page(self, segments: list[str], query: dict[str, str]) -> str:
        now = self.now()
        match segments:
            case [""]:
                dates = parse_range(query.get("from"), query.get("to"), now.date())
                attention = needs_attention(self.storage, dates, now)
                return grid_pages.partners_page(across_partners(self.storage, dates, now), dates, attention)
            case ["operations"]:
                return detail_pages.operations_page(operations_view(self.storage, self.queue, now, self.queue_problem))
            case ["partners", partner_id]:
                grid = partner_grid(
                    self.storage,
                    partner_id,
                    parse_range(query.get("from"), query.get("to"), now.date()),
                    now,
                    parse_status(query.get("status")),
                    query.get("store", ""),
                )
                return grid_pages.overview_page(grid)
            case ["partners", partner_id, "profile"]:
                shown = detail_pages.profile_page(profile(self.storage, partner_id, now.date()))
                return with_webhooks(shown, self.webhooks, partner_id)
            case ["partners", partner_id, "stores", store_id, "days", date]:
                day = parse_date(date, "business date")
                view = store_day(self.storage, partner_id, store_id, day, now)
                listed = day_transactions(self.storage, partner_id, store_id, day, query)
                return detail_pages.store_day_page(view, transactions_section(listed, partner_id, store_id, date))
        raise NotFound("no such page")


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer
    protocol_version = "HTTP/1.1"  # keep-alive: a browser loads many pages over one connection

    def do_GET(self) -> None:
        if not self._from_loopback_name():
            self._send(Response(400, problem_page(400, "open the dashboard at 127.0.0.1 or localhost")))
            return
        try:
            response = self.server.dashboard.get(self.path)
        except Exception:  # a page never shows a traceback; the operator's terminal does
            log.exception("GET %s failed", self.path)
            response = Response(500, problem_page(500, "the page failed; the dashboard's output says why"))
        self._send(response)

    def __getattr__(self, name: str) -> Callable[[], None]:
        # http.server looks up do_<METHOD> and answers 501 when it is missing: every method but GET is 405.
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self.close_connection = True  # its body, if any, is not read
        self._send(Response(405, problem_page(405, "the dashboard is read-only: GET only")), {"Allow": "GET"})

    def _from_loopback_name(self) -> bool:
        host = self.headers.get("Host")
        if host is None:
            return True
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.lower() in LOOPBACK_NAMES

    def _send(self, response: Response, headers: dict[str, str] | None = None) -> None:
        body = response.body.encode("utf-8")
        self.send_response(response.status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in {**SECURITY_HEADERS, **(headers or {})}.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  # http.server's signature
        sys.stderr.write(f"{self.log_date_time_string()} {format % args}\n")


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, dashboard: Dashboard, port: int) -> None:
        self.dashboard = dashboard
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"
