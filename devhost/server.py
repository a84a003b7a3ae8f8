"""HTTP/1.1 over real sockets, one thread per connection, dispatching to the app's HTTP functions."""

from __future__ import annotations

import logging
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

import azure.functions as func
import orjson

from devhost.functions import FunctionTable, invoke

# The Functions front end refuses bodies over 100 MB before the app sees them; so does this host.
HOST_BODY_LIMIT = 100 * 1024 * 1024
log = logging.getLogger("pos.devhost")


def _problem(status: int, code: str, detail: str) -> tuple[int, dict[str, str], bytes]:
    body = {"type": "about:blank", "title": code.replace("_", " ").title(), "status": status, "code": code,
            "detail": detail}
    return status, {"Content-Type": "application/problem+json"}, orjson.dumps(body)


class FunctionsHttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default listen backlog is 5: a burst of new connections overflows it, and the
    # dropped ones wait for the client's SYN retry (about a second) before they are even accepted.
    request_queue_size = socket.SOMAXCONN

    def __init__(self, address: tuple[str, int], table: FunctionTable, prefix: str) -> None:
        self.table = table
        self.prefix = prefix.strip("/")
        super().__init__(address, _Handler)

    def dispatch(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        split = urlsplit(target)
        path = unquote(split.path).strip("/")
        if self.prefix:
            if path != self.prefix and not path.startswith(self.prefix + "/"):
                return _problem(404, "NOT_FOUND", "No such resource.")
            path = path[len(self.prefix):].strip("/")
        matches = self.table.match(path)
        function, route_params = next(((f, p) for f, p in matches if method in f.methods), (None, None))
        if function is None:
            return _problem(404, "NOT_FOUND", "No such resource." if not matches else
                            f"{method} is not supported here; use {', '.join(sorted(matches[0][0].methods))}.")
        host = headers.get("host", "127.0.0.1")
        request = func.HttpRequest(method, f"http://{host}{target}", headers=headers,
                                   params=dict(parse_qsl(split.query)), route_params=route_params, body=body)
        try:
            response = invoke(function.name, function.handler, request)
        except Exception:
            log.exception("function %s raised", function.name)
            return _problem(500, "INTERNAL_ERROR", "The function failed; see the host log.")
        out = {name: value for name, value in response.headers.items()}
        if response.mimetype and not any(k.lower() == "content-type" for k in out):
            out["Content-Type"] = response.mimetype
        return response.status_code, out, response.get_body()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FunctionsHttpServer

    def _serve(self) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            body = self._read_body(headers)
        except _TooLarge:
            self._send(*_problem(413, "PAYLOAD_TOO_LARGE", "The request body is too large."), close=True)
            return
        except (ValueError, ConnectionError):
            self._send(*_problem(400, "INVALID_PAYLOAD", "The request body could not be read."), close=True)
            return
        self._send(*self.server.dispatch(self.command, self.path, headers, body))

    def _read_body(self, headers: dict[str, str]) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks, total = [], 0
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024).strip():
                        pass
                    return b"".join(chunks)
                total += size
                if total > HOST_BODY_LIMIT:
                    raise _TooLarge
                chunks.append(self.rfile.read(size))
                self.rfile.readline(16)
        length = int(headers.get("content-length") or 0)
        if length < 0:
            raise ValueError("negative content-length")
        if length > HOST_BODY_LIMIT:
            raise _TooLarge
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, headers: dict[str, str], body: bytes, close: bool = False) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args) -> None:  # the app logs each request itself
        pass


class _TooLarge(Exception):
    pass
