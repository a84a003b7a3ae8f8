"""How `hq` prints: aligned tables, and partners' codes that stay readable in a line of text."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from rich.cells import cell_len

# What would make a partner's code in a comma-separated list ambiguous (see code_list).
_NEEDS_QUOTES = re.compile(r'[,;"]|^$')


def table(headers: list[str], rows: list[list[str]]) -> str:
    """Columns aligned as a terminal shows them: by display width (rich's cell_len), so that Japanese and
    other wide characters take their two columns (decision 0098)."""
    widths = [max(cell_len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]
    lines = [
        "  ".join(_padded(str(cell), width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [headers, *rows]
    ]
    return "\n".join(lines)


def _padded(cell: str, width: int) -> str:
    return cell + " " * (width - cell_len(cell))


def code_list(codes: list[str], separator: str = ",") -> str:
    """Partner codes joined by commas; a code is quoted (JSON) where a comma, a semicolon, a quote or
    spaces around it would hide where it ends ("FT/Venda" stays as it is, " 01" does not)."""
    return separator.join(
        json.dumps(code, ensure_ascii=False) if _NEEDS_QUOTES.search(code) or code != code.strip() else code
        for code in codes
    )


T = TypeVar("T")


def progress_lines(describe: Callable[[T], str]) -> Callable[[T], None]:
    """A long command's progress callback: each step described on stderr with the seconds since it began."""
    started = time.monotonic()

    def progress(done: T) -> None:
        print(f"  {describe(done)} ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    return progress
