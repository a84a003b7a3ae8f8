"""HTTP/1.1 over real sockets, one thread per connection, dispatching to the app's HTTP functions."""

from __future__ import annotations

import logging
import re
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

import azure.functions as func
import orjson

from devhost.functions import FunctionTable, invoke
from triggers.http import REQUEST_ID_HEADER, loggable_path, request_id_for
from triggers.telemetry import log_exception

# The Functions front end refuses bodies over 100 MB before the app sees them; so does this host.
HOST_BODY_LIMIT = 100 * 1024 * 1024
log = logging.getLogger("pos.devhost")


# Answers of the host itself (no function reached), by status: the code of their problem document.
_HOST_CODES = {
    400: "BAD_REQUEST",
    404: "NOT_FOUND",
    413: "PAYLOAD_TOO_LARGE",
    414: "URI_TOO_LONG",
    431: "HEADERS_TOO_LARGE",
    500: "INTERNAL_ERROR",
    501: "NOT_IMPLEMENTED",
    505: "HTTP_VERSION_NOT_SUPPORTED",
}


def _problem(status: int, code: str, detail: str, request_id: str) -> tuple[int, dict[str, str], bytes]:
    """A problem document from the host itself; it carries a request id like the app's own answers."""
    body = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "code": code,
        "detail": detail,
        "request_id": request_id,
    }
    return status, {"Content-Type": "application/problem+json", REQUEST_ID_HEADER: request_id}, orjson.dumps(body)


def route_path(raw_path: str) -> str:
    """The path a route is matched against, as Kestrel (the Functions host's server) makes it: every
    percent-escape decoded except %2F, so an encoded slash stays inside its segment and cannot split
    it; then the dot segments removed (RFC 3986 5.2.4), so `..` never climbs out of the route prefix."""
    decoded = unquote(re.sub("%2[fF]", "%252F", raw_path), errors="replace")
    segments: list[str] = []
    for segment in decoded.strip("/").split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    return "/".join(segments)


def forwarded_for(headers: dict[str, str], peer: tuple) -> dict[str, str]:
    """As Azure's front end does: the socket peer, `ip:port` (`[ip]:port` for IPv6), appended to any
    X-Forwarded-For the client sent, so the app reads the client address from one place everywhere."""
    host, port = peer[0], peer[1]
    hop = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    given = headers.get("x-forwarded-for", "").strip()
    return {**headers, "x-forwarded-for": f"{given}, {hop}" if given else hop}


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

    def dispatch(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        split = urlsplit(target)
        path = route_path(split.path)
        request_id = request_id_for(headers.get(REQUEST_ID_HEADER))
        if self.prefix:
            if path != self.prefix and not path.startswith(self.prefix + "/"):
                return self._refused(method, split.path, request_id, "No such resource.")
            path = path[len(self.prefix) :].strip("/")
        matches = self.table.match(path)
        function, route_params = next(((f, p) for f, p in matches if method in f.methods), (None, None))
        if function is None:
            return self._refused(
                method,
                split.path,
                request_id,
                "No such resource."
                if not matches
                else f"{method} is not supported here; use {', '.join(sorted(matches[0][0].methods))}.",
            )
        # The function sees the request id the host answers with (the caller's when it is plain).
        headers = {**headers, REQUEST_ID_HEADER: request_id}
        host = headers.get("host", "127.0.0.1")
        request = func.HttpRequest(
            method,
            f"http://{host}{target}",
            headers=headers,
            params=dict(parse_qsl(split.query, keep_blank_values=True)),
            route_params=route_params,
            body=body,
        )
        try:
            response = invoke(function.name, function.handler, request)
        except Exception as error:
            log_exception(log, f"function {function.name} raised", error, request_id=request_id)
            return _problem(
                500, "INTERNAL_ERROR", "The function failed; quote the request_id to HQ support.", request_id
            )
        out = {name: value for name, value in response.headers.items()}
        if response.mimetype and not any(k.lower() == "content-type" for k in out):
            out["Content-Type"] = response.mimetype
        return response.status_code, out, response.get_body()

    @staticmethod
    def _refused(method: str, raw_path: str, request_id: str, detail: str) -> tuple[int, dict[str, str], bytes]:
        """A 404 of the host itself, logged like the app's answers so that its request id leads somewhere."""
        path = loggable_path(raw_path.lstrip("/"))
        log.info(
            "%s %s -> 404",
            method,
            path,
            extra={
                "event": "http_request",
                "request_id": request_id,
                "method": method,
                "path": path,
                "status": 404,
                "code": "NOT_FOUND",
            },
        )
        return _problem(404, "NOT_FOUND", detail, request_id)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FunctionsHttpServer

    def setup(self) -> None:
        super().setup()
        # As Kestrel does: an answer goes out in two writes (head, then body), and with Nagle's algorithm
        # the second waits for the client's delayed ACK, 40 ms per request on a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _serve(self) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            body = self._read_body(headers)
        except _TooLarge:
            self._send(
                *_problem(
                    413,
                    "PAYLOAD_TOO_LARGE",
                    "The request body is too large.",
                    request_id_for(headers.get(REQUEST_ID_HEADER)),
                ),
                close=True,
            )
            return
        except (ValueError, ConnectionError):
            self._send(
                *_problem(
                    400,
                    "INVALID_PAYLOAD",
                    "The request body could not be read.",
                    request_id_for(headers.get(REQUEST_ID_HEADER)),
                ),
                close=True,
            )
            return
        self._send(*self.server.dispatch(self.command, self.path, forwarded_for(headers, self.client_address), body))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What http.server answers by itself (request line too long, bad headers, unknown method): a
        problem document with a request id instead of its HTML page, which would echo the request."""
        given = self.headers.get(REQUEST_ID_HEADER) if getattr(self, "headers", None) is not None else None
        status = code if code in _HOST_CODES else 400
        # A request line refused before its version was read leaves http.server on HTTP/0.9, which
        # would send the body without a status line or headers.
        if getattr(self, "request_version", "HTTP/0.9") in ("HTTP/0.9", ""):
            self.request_version = "HTTP/1.1"
        self._send(
            *_problem(status, _HOST_CODES[status], f"{HTTPStatus(status).phrase}.", request_id_for(given)), close=True
        )

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

    # Every method a function may declare (azure-functions 2.x adds QUERY), served as the host routes them.
    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_QUERY = _serve

    def log_message(self, *_args) -> None:  # the app logs each request itself
        pass


class _TooLarge(Exception):
    pass
