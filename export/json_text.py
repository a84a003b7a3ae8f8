"""The two fields the datasets keep as JSON text, a record's tax_lines and each item line's modifiers, as the
text orjson writes of them ("[]" for null or absent; decision 0087).

Cut from the documents' text where it is as the service writes documents (compact, tax_lines the last key,
each item line with one "modifiers", no bracket, quote or backslash in their strings): by Arrow's regular
expressions on a page's documents at once, which hold no GIL, so the cut runs beside the next page's read
(decision 0117). A document cut so gives the text the cut in Python gives (`json_texts`, which tells what
it cannot and parses those again with orjson); any other document is given to it."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import cast

import orjson
import pyarrow as pa
import pyarrow.compute as pc

TAX_LINES = b'"tax_lines":'
MODIFIERS = b'"modifiers":'
NO_MODIFIERS = b'"modifiers":[]'

# A text the cut takes: null, or an array holding no array whose strings hold no bracket, quote or backslash.
_ARRAY = r'null|\[[^\[\]\\"]*(?:"[^"\[\]\\]*"[^\[\]\\"]*)*\]'
# The document's last key; anchored at the end, Arrow's RE2 reads the document from its end.
_LAST_TAX_LINES = r'"tax_lines":(?P<text>' + _ARRAY + r")\}\n$"
_MODIFIERS_VALUE = r"^(?P<text>" + _ARRAY + ")"
_NULL = pa.scalar(b"null", pa.large_binary())
_EMPTY = pa.scalar(b"[]", pa.large_binary())


def page_texts(documents: Sequence[bytes], data: bytes, lines: pa.Array) -> tuple[pa.Array, pa.ListArray]:
    """Each document's tax_lines (string), and the modifiers of each of its `lines` item lines
    (list<string>). `data`: the documents joined, each followed by a newline."""
    ends = pa.array([0, *accumulate(len(document) + 1 for document in documents)], pa.int64())
    texts = pa.Array.from_buffers(pa.large_binary(), len(documents), [None, ends.buffers()[1], pa.py_buffer(data)])
    tax_lines = pc.struct_field(pc.extract_regex(texts, _LAST_TAX_LINES), [0])
    parts = pc.list_slice(pc.split_pattern(texts, MODIFIERS.decode()), 1)  # the text after each "modifiers":
    found = pc.struct_field(pc.extract_regex(parts.flatten(), _MODIFIERS_VALUE), [0])
    modifiers = pa.ListArray.from_arrays(parts.offsets, _as_text(found))
    uncut = pc.or_kleene(pc.is_null(tax_lines), pc.not_equal(pc.list_value_length(parts), lines))
    missed = set(pc.filter(pc.list_parent_indices(parts), pc.is_null(found)).to_pylist())
    missed.update(pc.indices_nonzero(uncut).to_pylist())
    tax_lines = _as_text(tax_lines)
    if not missed:
        return tax_lines, modifiers
    return _with_json_texts(documents, lines, sorted(missed), tax_lines, modifiers)


def _as_text(found: pa.Array) -> pa.Array:
    return pc.if_else(pc.equal(found, _NULL), _EMPTY, found).cast(pa.string())


def _with_json_texts(
    documents: Sequence[bytes], lines: pa.Array, missed: list[int], tax_lines: pa.Array, modifiers: pa.ListArray
) -> tuple[pa.Array, pa.ListArray]:
    """The texts with those of the documents at `missed` as json_texts gives them."""
    taxes, lists = tax_lines.to_pylist(), modifiers.to_pylist()
    counts = lines.to_pylist()
    for position in missed:
        tax, found = json_texts([documents[position]], [counts[position]])
        taxes[position], lists[position] = tax[0], found
    return pa.array(taxes, pa.string()), pa.array(lists, pa.list_(pa.string()))


def json_texts(documents: list[bytes], lines: list[int]) -> tuple[list[str], list[str]]:
    """Each document's tax_lines, and the modifiers of each of its `lines` item lines, as the JSON text orjson
    writes for them ("[]" for null or absent). Cut from the document's text where it is as the service
    writes documents (compact, each item line with one "modifiers"): a sixth of the time of parsing them
    again; parsed again otherwise."""
    tax_lines: list[str] = []
    modifiers: list[str] = []
    for document, count in zip(documents, lines, strict=True):
        texts = _cut(document, count) or _parsed_texts(document)
        tax_lines.append(texts[0])
        modifiers += texts[1:]
    return tax_lines, modifiers


def _cut(document: bytes, lines: int) -> list[str] | None:
    """The document's tax_lines then its lines' modifiers, cut from its text; None where it cannot tell.
    A key is found by its quoted name and colon: inside a JSON string a quote is escaped, so that text is
    a key there, and only records have a "tax_lines", only item lines a "modifiers"."""
    at = document.rfind(TAX_LINES)
    texts = [_array_at(document, at + len(TAX_LINES)) if at >= 0 else "[]"]
    if document.count(NO_MODIFIERS) == lines:  # the usual line: one scan for all the document's lines
        texts += ["[]"] * lines
    else:
        parts = document.split(MODIFIERS)
        if len(parts) != lines + 1:
            return None
        texts += [_array_at(part, 0) for part in parts[1:]]
    return None if None in texts else cast(list[str], texts)


def _array_at(data: bytes, start: int) -> str | None:
    """The JSON text of the array (or null) at `start`, if it holds no array and its strings no bracket,
    quote or backslash (a text cut at its first "]"); else None."""
    if data.startswith(b"[]", start) or data.startswith(b"null", start):
        return "[]"
    text = data[start : data.find(b"]", start) + 1]
    if text[:1] != b"[" or text.count(b"[") != 1 or text.count(b'"') % 2 or b"\\" in text:
        return None
    return text.decode()


def _parsed_texts(document: bytes) -> list[str]:
    record = orjson.loads(document)
    values = [record.get("tax_lines"), *(line.get("modifiers") for line in record.get("items") or [])]
    return [orjson.dumps(value or []).decode() for value in values]
