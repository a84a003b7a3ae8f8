"""The Cosmos DB SDK's JSON, by orjson: azure-cosmos 4.17 writes every request body with the standard
library's `json.dumps` and reads every answer with `json.loads` (in `azure.cosmos._synchronized_request`),
and a 500-record batch sends and receives about 2 MB of items each way. With orjson there, an accept costs
about a seventh less CPU in this process (decision 0057); in Azure CPU
is what instances are billed by.

This replaces the module's `json` with `CosmosJson` once, when the adapter connects. Only bodies the SDK
writes as compact UTF-8 (item writes and transactional batches, `enable_compact_utf8_item_writes`) go
through orjson; the bodies it escapes to ASCII (queries, control-plane requests) stay with the standard
library, and so does anything orjson refuses (an integer beyond 64 bits, a lone surrogate). orjson's bytes
reach the transport as they are (`Utf8Body`): the SDK asks for a str and encodes it to UTF-8 at once, and that
round trip cost more than writing the JSON (decision 0126). A record's
document travels as an `orjson.Fragment` of the JSON it was stored as (record_writes.py), which only orjson
writes: the standard library's path reads it back through orjson first. The SDK is
pinned (requirements.txt); `install` refuses an SDK whose module no longer reads `json` that way, and
tests/unit/test_cosmos_sdk_json.py holds both writers to the same JSON."""

from __future__ import annotations

import json
from typing import Any

import orjson
from azure.cosmos import _synchronized_request


class Utf8Body:
    """A request body written as UTF-8 already, in place of the str the SDK encodes to UTF-8 next
    (`_request_body_from_data`, its only call with ensure_ascii=False): `encode` hands back the bytes."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        if encoding.lower().replace("-", "").replace("_", "") == "utf8":
            return self.data
        return self.data.decode().encode(encoding, errors)


class CosmosJson:
    """What `azure.cosmos._synchronized_request` calls of the `json` module."""

    @staticmethod
    def dumps(data: Any, separators: tuple[str, str] | None = None, ensure_ascii: bool = True) -> str | Utf8Body:
        if not ensure_ascii:
            try:
                return Utf8Body(orjson.dumps(data))  # compact, as separators=(",", ":")
            except orjson.JSONEncodeError:
                pass
        try:
            return json.dumps(data, separators=separators, ensure_ascii=ensure_ascii)
        except TypeError:  # a record's document kept as JSON (orjson.Fragment), which only orjson writes
            return json.dumps(orjson.loads(orjson.dumps(data)), separators=separators, ensure_ascii=ensure_ascii)

    @staticmethod
    def loads(data: str | bytes) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return json.loads(data)  # what orjson does not read, the standard library says why


def install() -> None:
    """Make the SDK's requests and answers go through CosmosJson (idempotent)."""
    current = getattr(_synchronized_request, "json", None)
    if current is CosmosJson:
        return
    if current is not json:
        raise RuntimeError("azure.cosmos._synchronized_request no longer uses the json module: check sdk_json.py")
    # attr-defined only under a global `mypy --strict` (the SDK module's `json` is its own import, not an export).
    _synchronized_request.json = CosmosJson  # type: ignore[assignment,attr-defined,unused-ignore]
