"""What a write body is, for its batch marker: the digest of its bytes (`body_digest`: a retry sends the same
bytes, told cheaply) and the digest of what it says (`meaning_digest`: the same content written otherwise,
decision 0029)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from uuid import UUID

import orjson

from core import errors
from ingest.parsing import parse
from ingest.wire.requests import WriteBatch


def body_digest(body: bytes) -> str:
    """SHA-256 of the body with its batch_id's text in canonical form: a resend that writes the same
    UUID in another case or form is the same body. Every other byte counts as sent."""
    return hashlib.sha256(_canonical_batch_id(body)).hexdigest()


def raw_digest(body: bytes) -> str:
    """SHA-256 of the bytes as sent: what markers stored before `body_digest` canonicalised."""
    return hashlib.sha256(body).hexdigest()


# The batch_id written as the body's first member, without escapes: the usual case, found without
# reading the rest of the body (a nested member named batch_id cannot come first).
_LEADING_BATCH_ID = re.compile(rb'\A[ \t\n\r]*\{[ \t\n\r]*"batch_id"[ \t\n\r]*:[ \t\n\r]*"([^"\\]*)"')
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _canonical_batch_id(body: bytes) -> bytes:
    """body with the text of its batch_id (the body's own member, not a nested one) replaced by the
    canonical form of its UUID; body itself when it is already canonical or has no readable batch_id."""
    leading = _LEADING_BATCH_ID.match(body)
    if leading is not None:
        start, end = leading.span(1)
        text = leading.group(1).decode("utf-8", "replace")
    else:
        found = _batch_id_span(body)
        if found is None:
            return body
        start, end, text = found
    try:
        canonical = str(UUID(text)).encode()
    except ValueError:
        return body
    if body[start:end] == canonical:
        return body
    return body[:start] + canonical + body[end:]


def _after_whitespace(text: str, at: int) -> int:
    """The index of the first character at or after `at` that is not JSON whitespace."""
    spaces = _WHITESPACE.match(text, at)  # matches everywhere (it may match nothing)
    return spaces.end() if spaces else at


def _batch_id_span(body: bytes) -> tuple[int, int, str] | None:
    """(start, end, text) of the batch_id string's content (between its quotes) among the members of the
    body's object, as byte offsets; None when the body is not such an object. Reads the values it steps
    over: only for a body whose batch_id is not its first member, or is written with escapes."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    try:
        at = _after_whitespace(text, 0)
        if text[at : at + 1] != "{":
            return None
        at = _after_whitespace(text, at + 1)
        while text[at : at + 1] == '"':
            name, at = decoder.raw_decode(text, at)  # the member name, a JSON string
            at = _after_whitespace(text, at) + 1  # the colon
            start = _after_whitespace(text, at)
            value, at = decoder.raw_decode(text, start)
            if name == "batch_id" and isinstance(value, str):
                return len(text[: start + 1].encode()), len(text[: at - 1].encode()), value
            at = _after_whitespace(text, at)
            at = _after_whitespace(text, at + 1) if text[at : at + 1] == "," else at
    except (ValueError, RecursionError):
        return None
    return None


def meaning_digest(batch: WriteBatch) -> str:
    """SHA-256 of what a batch says, as the service read it: its batch_id's UUID, then the model's values, keys
    sorted (the languages of a localized name are members too, whose order says nothing). Whitespace, member
    order, escapes and members the service does not know make no difference (decision 0029: RESEND_BODY_IGNORED
    tells a change of content, not of bytes); an optional field sent as "" is the same as one left out. Trade
    records say it with their stored documents instead (ingest/trade_batches.py `meaning_of_records`)."""
    digest = hashlib.sha256(batch.batch_key.encode())
    digest.update(orjson.dumps(batch.model_dump(mode="json", exclude={"batch_id"}), option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


def meaning_of_body(model: type[WriteBatch]) -> Callable[[bytes], str | None]:
    """What a resent body of model says (`meaning_digest`), or None when it is not a valid one."""

    def meaning(body: bytes) -> str | None:
        try:
            return meaning_digest(parse(model, body)[0])
        except errors.ApiError:
            return None

    return meaning
