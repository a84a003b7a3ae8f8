"""The Cosmos DB SDK's JSON by orjson (backends/cosmos/sdk_json.py): the same documents as the standard
library writes and reads, the standard library wherever orjson refuses, and installed in the pinned SDK."""

from __future__ import annotations

import json

import orjson
import pytest
from azure.cosmos import _synchronized_request

from backends.cosmos import sdk_json
from backends.cosmos.sdk_json import CosmosJson

ITEMS = [
    {"id": "r|T-1", "pk": "d|p|S1|2026-11-20", "total_minor": 9_007_199_254_740_991, "ok": True, "none": None},
    {"document": {"name": {"ja-JP": "お茶 500ml", "th-TH": "ชาเขียว", "ar": "شاي"}, "lines": [1, 2.5, -0.0]}},
    [("create", ({"id": "x", "emoji": "🍔", "quote": 'a"b\\c', "control": "\u0001"},))],
]


@pytest.mark.parametrize("data", ITEMS)
def test_it_writes_the_json_the_standard_library_writes(data):
    written = CosmosJson.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")  # as the SDK does
    assert json.loads(written) == json.loads(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    assert CosmosJson.loads(written) == json.loads(written)
    assert CosmosJson.loads(written.decode()) == json.loads(written)


def test_a_utf8_body_reaches_the_transport_as_written():
    sdk_json.install()
    body = CosmosJson.dumps({"name": "お茶"}, ensure_ascii=False)
    assert isinstance(body, sdk_json.Utf8Body)
    assert body.encode("utf-8") is body.data and body.encode("UTF8") is body.data
    assert body.encode("utf-16-le") == '{"name":"お茶"}'.encode("utf-16-le")
    assert _synchronized_request._request_body_from_data({"name": "お茶"}, ensure_ascii=False) == (
        '{"name":"お茶"}'.encode()
    )


def test_escaped_bodies_stay_with_the_standard_library():
    data = {"query": "SELECT * FROM c WHERE c.name = @n", "parameters": [{"name": "@n", "value": "店"}]}
    assert CosmosJson.dumps(data, separators=(",", ":")) == json.dumps(data, separators=(",", ":"))


@pytest.mark.parametrize("data", [{"big": 2**70}, {"lone": "\ud800"}, {1: "non-string key"}])
def test_what_orjson_refuses_is_written_by_the_standard_library(data):
    written = CosmosJson.dumps(data, separators=(",", ":"), ensure_ascii=False)
    assert written == json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def test_it_reads_what_only_the_standard_library_reads():
    assert CosmosJson.loads('{"n": NaN}')["n"] != CosmosJson.loads('{"n": NaN}')["n"]  # NaN, as json reads it
    with pytest.raises(ValueError):
        CosmosJson.loads("{not json")


def test_it_is_installed_in_the_sdk_once(monkeypatch):
    monkeypatch.setattr(_synchronized_request, "json", json)
    sdk_json.install()
    sdk_json.install()
    assert _synchronized_request.json is CosmosJson


def test_an_sdk_that_no_longer_reads_json_there_is_refused(monkeypatch):
    monkeypatch.setattr(_synchronized_request, "json", object())
    with pytest.raises(RuntimeError, match="sdk_json.py"):
        sdk_json.install()


def test_a_document_kept_as_json_is_written_as_it_is_on_either_path():
    item = {"id": "r|T-1", "document": orjson.Fragment('{"name":{"ja-JP":"お茶"},"n":1}')}
    expected = {"id": "r|T-1", "document": {"name": {"ja-JP": "お茶"}, "n": 1}}
    assert json.loads(CosmosJson.dumps(item, separators=(",", ":"), ensure_ascii=False).encode()) == expected
    escaped = CosmosJson.dumps(item, separators=(",", ":"))  # the standard library's path, ASCII only
    assert escaped.isascii() and json.loads(escaped) == expected
