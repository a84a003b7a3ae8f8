"""A local HTTP server that answers every request as an Azure account's firewall does: 403 with the body
and headers the service documents. Azure's network rules cannot run on this machine, so this stands in for
them in front of the real SDKs (azure-cosmos, azure-storage-queue), which read its answers as they would
read Azure's.

- Cosmos DB: 403 whose message says the path the request came by, "Request originated from client IP
  ... through public internet. This is blocked by your Cosmos DB account firewall settings." (Azure Cosmos
  DB docs, "Diagnose and troubleshoot forbidden exceptions", Firewall blocking requests).
- Azure Storage: 403 with `x-ms-error-code: AuthorizationFailure`, the code of a request its network rules
  refuse (a missing data role is `AuthorizationPermissionMismatch`).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SEEN_ADDRESS = "203.0.113.7"  # a documentation address (RFC 5737), as the firewall would name the caller
COSMOS_MESSAGE = (
    f"Request originated from client IP {SEEN_ADDRESS} through public internet. This is blocked by your "
    "Cosmos DB account firewall settings. More info: https://aka.ms/cosmosdb-tsg-forbidden\r\n"
    "ActivityId: 3f0c6d3e-2a59-4f4b-9a0e-0d6d2c1b7a01, Microsoft.Azure.Documents.Common/2.14.0"
)
STORAGE_BODY = (
    '<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationFailure</Code><Message>This request is '
    "not authorized to perform this operation.\nRequestId:5f2c1d8e-0001-0000-0000-000000000000\n"
    "Time:2026-11-27T10:00:00.0000000Z</Message></Error>"
)


def _handler(service: str):
    class Firewall(BaseHTTPRequestHandler):
        def _refuse(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if service == "cosmos":
                body = json.dumps({"code": "Forbidden", "message": COSMOS_MESSAGE}).encode()
                headers = {"Content-Type": "application/json", "x-ms-activity-id": "3f0c6d3e"}
            else:
                body = STORAGE_BODY.encode()
                headers = {"Content-Type": "application/xml", "x-ms-error-code": "AuthorizationFailure"}
            self.send_response(403)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _refuse

        def log_message(self, *args) -> None:  # quiet
            pass

    return Firewall


@contextlib.contextmanager
def firewall(service: str) -> Iterator[str]:
    """The base URL of a firewall that refuses everything ("cosmos" or "storage"), while in the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(service))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
