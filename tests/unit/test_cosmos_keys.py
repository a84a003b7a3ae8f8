"""Compound keys at Cosmos DB's id limit (backends/cosmos/keys.py): a key is hashed exactly when its bytes pass
1,023, whether its parts are plain or escaped (decision 0127: the length is taken in characters, which are
ASCII once escaped)."""

import pytest

from backends.cosmos.keys import MAX_ID_BYTES, compound_key


@pytest.mark.parametrize("extra", [0, 1])
def test_a_plain_key_is_hashed_only_past_the_limit(extra):
    code = "x" * (MAX_ID_BYTES - len("r|") + extra)
    key = compound_key("r", code)
    assert key == "r|" + code if not extra else key.startswith("sha256|")


@pytest.mark.parametrize("extra", [0, 1])
def test_an_escaped_key_is_hashed_only_past_the_limit_in_bytes(extra):
    # "店" is 3 bytes of UTF-8, escaped as ~XX each: 9 ASCII characters; "a" pads to the limit exactly.
    code = "店" * 100 + "a" * (MAX_ID_BYTES - len("r|") - 900 + extra)
    key = compound_key("r", code)
    assert key.isascii()
    assert key.startswith("sha256|") == bool(extra)
    if not extra:
        assert len(key.encode()) == MAX_ID_BYTES and key.startswith("r|~E5~BA~97")
