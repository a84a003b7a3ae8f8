"""`pos-partner listen`: a receiver for the service's webhooks on this machine, for local development.

Every request is verified (webhooks.verify); a valid event is printed and answered 204, an event already
seen (same webhook-id: a retry or a redelivery) is printed as a duplicate and answered 204 too, anything
else is answered 400. Against a local service (`make run` with WEBHOOK_ALLOW_LOOPBACK=true), HQ registers
`http://127.0.0.1:PORT/` for the partner; the secret comes from POS_WEBHOOK_SECRET (never a flag: it
would show in the process list)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pos_partner_client.webhooks import WebhookVerificationError, verify

MAX_BODY_BYTES = 1024 * 1024


def add_command(commands: Any) -> None:
    listen = commands.add_parser("listen", help="receive and verify webhooks on this machine (development)")
    listen.add_argument("--port", type=int, default=8765, help="the loopback port to listen on (default 8765)")
    listen.add_argument("--format", choices=("table", "json"), default="table", help="json: one event per line")
    listen.set_defaults(run=lambda args, out, err: run(args))


def _line(event: dict[str, Any], message_id: str, duplicate: bool) -> str:
    data = event.get("data") or {}
    about = " ".join(str(data[k]) for k in ("store_id", "business_date", "status") if k in data)
    return f"{message_id} {event.get('type')} {about}{' (duplicate: already handled)' if duplicate else ''}"


def serve(secret: str, port: int, as_json: bool) -> ThreadingHTTPServer:
    seen: set[str] = set()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(min(length, MAX_BODY_BYTES))
            headers = dict(self.headers.items())
            try:
                event = verify(secret, body, headers)
            except (WebhookVerificationError, ValueError) as error:
                print(f"refused a request: {error}", file=sys.stderr, flush=True)
                self._answer(400)
                return
            message_id = next((value for name, value in headers.items() if name.lower() == "webhook-id"), "")
            with lock:
                duplicate = message_id in seen
                seen.add(message_id)
            if as_json:
                print(json.dumps({"id": message_id, "duplicate": duplicate, **event}, ensure_ascii=False), flush=True)
            else:
                print(_line(event, message_id, duplicate), flush=True)
            self._answer(204)

        def _answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def run(args: argparse.Namespace) -> int:
    secret = os.environ.get("POS_WEBHOOK_SECRET", "")
    if not secret.startswith("whsec_"):
        print("set POS_WEBHOOK_SECRET to the whsec_ secret HQ gave you", file=sys.stderr)
        return 2
    server = serve(secret, args.port, args.format == "json")
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
