"""A partner's webhook endpoint on loopback for tests: a real HTTP server that answers each request as
its script says (a status code, "timeout": no answer until the sender gave up, "hold": no answer until
the test releases it) and keeps every request, verified with the `standardwebhooks` library."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import standardwebhooks


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    answer: str

    @property
    def event(self) -> dict:
        return json.loads(self.body)

    def verified(self, secret: str) -> dict:
        """The event as the specification's library reads it: raises when the signature is not valid."""
        return standardwebhooks.Webhook(secret).verify(self.body, self.headers)


class Receiver:
    def __init__(self, script: list[str], then: str = "200", timeout_hold: float = 3.0) -> None:
        self.script = list(script)
        self.then = then
        self.timeout_hold = timeout_hold
        self.received: list[Received] = []
        self.holding = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    answer = receiver.script.pop(0) if receiver.script else receiver.then
                    receiver.received.append(Received(dict(self.headers.items()), body, answer))
                if answer == "timeout":
                    time.sleep(receiver.timeout_hold)
                    answer = "200"  # too late: the sender gave up already
                elif answer == "hold":
                    receiver.holding.set()
                    receiver.release.wait(60)
                    answer = "200"
                try:
                    self.send_response(int(answer))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/pos"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count: int, timeout: float = 60) -> list[Received]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return list(self.received)

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
