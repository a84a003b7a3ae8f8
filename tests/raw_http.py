"""HTTP read off a raw socket, for tests whose server must misbehave in ways no framework allows (answers cut
off after the request, wrong lengths)."""

from __future__ import annotations

import socket


def read_request(connection: socket.socket) -> bytes:
    """One request whole: its head, then as many bytes as its Content-Length says."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body
