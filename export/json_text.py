"""The JSON text of the parts the datasets keep as text (a record's tax_lines, an item line's modifiers), written
by Arrow's kernels from the parsed values rather than cut from each document in Python (decision 0123).

The text is what orjson writes for the value as the service stores it (the wire's TaxLine and TradeModifier,
every field in its order, decision 0021): compact, a string quoted with `"`, `\\` and the control characters
escaped as orjson escapes them, every other character as it is (UTF-8), null as `null`, a boolean as
`true`/`false`; "[]" for a list that is null or absent."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

# The wire's TaxLine and TradeModifier (ingest/wire/requests.py) as stored: every field a string but one.
TAX_LINE = pa.struct(
    [
        ("tax_code", pa.string()),
        ("tax_rate", pa.string()),
        ("taxable_amount", pa.string()),
        ("tax_amount", pa.string()),
        ("is_inclusive", pa.bool_()),
    ]
)
MODIFIER = pa.struct(
    [
        ("group_id", pa.string()),
        ("option_id", pa.string()),
        ("option_name", pa.string()),
        ("quantity", pa.string()),
        ("price_delta", pa.string()),
    ]
)

# What orjson escapes in a string: the quote, the backslash (first, so that it is not escaped twice) and the
# control characters, five by their short names, the others as \u00XX in lower case.
_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
ESCAPES = [("\\", "\\\\"), ('"', '\\"')] + [
    (chr(code), _SHORT.get(chr(code), f"\\u{code:04x}")) for code in range(0x20)
]
NEEDS_ESCAPE = re.compile(rb'["\\\x00-\x1f]')


def lists_as_json(lists: pa.ListArray) -> pa.Array:
    """Each list of structs (TAX_LINE or MODIFIER) as its JSON text; "[]" where the list is null."""
    objects = _objects(lists.values)
    joined = pc.binary_join(pa.ListArray.from_arrays(lists.offsets, objects), ",")
    return pc.binary_join_element_wise("[", joined, "]", "").fill_null("[]")


def _objects(structs: pa.StructArray) -> pa.Array:
    """Each struct as a JSON object, its fields in the order of its type: one join of the columns between the
    text around them (a join a field cost twice as much)."""
    parts: list[pa.Array | str] = []
    text = ""  # the text since the last column
    for index, field in enumerate(structs.type):
        column = structs.field(index)
        text += ("{" if index == 0 else ",") + f'"{field.name}":'
        if column.type == pa.bool_() or column.null_count:
            parts += [text, _value(column)]
            text = ""
        else:
            parts += [text + '"', _escaped(column)]
            text = '"'
    objects = pc.binary_join_element_wise(*parts, text + "}", "")
    return pc.if_else(structs.is_valid(), objects, "null") if structs.null_count else objects


def _value(column: pa.Array) -> pa.Array:
    if column.type == pa.bool_():
        text = pc.if_else(column, "true", "false")
    else:
        text = pc.binary_join_element_wise('"', _escaped(column), '"', "")
    return text.fill_null("null") if column.null_count else text


def _escaped(strings: pa.Array) -> pa.Array:
    """The strings as inside a JSON string; where none needs escaping (codes and amounts never do), one scan of
    their bytes rather than a regular expression per string."""
    data = strings.buffers()[2]
    if data is None or not NEEDS_ESCAPE.search(memoryview(data)):
        return strings
    for character, escape in ESCAPES:
        strings = pc.replace_substring(strings, character, escape)
    return strings
