"""pos-partner's tables measure wide characters as a terminal shows them (decision 0098): a Japanese
transaction id takes two columns a character, so a table that would not fit is written as blocks instead of
being folded mid-id."""

from __future__ import annotations

import io

from pos_partner_client.output import table
from rich.console import Console


def printed(width: int, *cells: str) -> str:
    listing = table("transaction", "kind", "difference")
    listing.add_row(*cells)
    out = io.StringIO()
    listing.print(Console(file=out, width=width, force_terminal=False))
    return out.getvalue()


def test_a_table_of_wide_ids_that_would_not_fit_is_written_as_blocks():
    wide_id = "麺屋-渋谷-2026-11-20-0013"  # 21 characters, 25 columns
    assert "┃" in printed(80, wide_id, "missing at HQ", "-2")
    narrow = printed(56, wide_id, "missing at HQ", "-2")  # fits by characters (54), not by columns (58)
    assert "┃" not in narrow and f"- {wide_id} · missing at HQ · -2" in narrow
