"""The HTTP floor: the same stdlib server the local host uses (ThreadingHTTPServer, HTTP/1.1, one thread
per connection) doing only the floor work of an accept (bench/floors.py) for every POST.

    python -m bench.floor_server PORT DATA_DIR
"""

from __future__ import annotations

import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson

from bench import floors
from triggers.garbage_collection import set_for_requests


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, data_dir: Path) -> None:
        self.db_path = data_dir / "floor-http.sqlite3"
        floors.connect(self.db_path).close()
        self.local = threading.local()
        super().__init__(address, _Handler)

    def connection(self):
        connection = getattr(self.local, "connection", None)
        if connection is None:
            connection = self.local.connection = floors.connect(self.db_path, schema=None)
        return connection


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # As the local host does: the head and the body are two writes, and Nagle's algorithm would hold
        # the second for the client's delayed ACK (~40 ms a request), which is not work of the floor.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self._send(200, b'{"status":"ok"}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        count = floors.accept(self.server.connection(), body)
        self._send(202, orjson.dumps({"status": "ACCEPTED", "record_count": count, "warnings": []}))

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args) -> None:
        pass


def main(argv: list[str]) -> int:
    port, data_dir = int(argv[0]), Path(argv[1])
    server = _Server(("127.0.0.1", port), data_dir)
    set_for_requests()  # the collector settings of the host it is compared with (function_app.py)
    print(f"floor server on {port}", flush=True)
    server.serve_forever(poll_interval=0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
