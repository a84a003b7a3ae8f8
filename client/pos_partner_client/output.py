"""How pos-partner writes what it found: tables fitted to the terminal for people, or one JSON document on
stdout for a scheduler (`--format json`). The exit code says the same either way (cli.py EXIT_*)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

FORMATS = ("table", "json")
LOG_WIDTH = 200  # a log (a scheduler's, a pipe to a file) gets wide lines rather than folded ids


def console(stderr: bool) -> Console:
    """A console as wide as the terminal the user looks at: its stream's, else COLUMNS, else the terminal of
    stderr (stdout piped to `less` or a file); a log with none of them (a scheduler's) gets LOG_WIDTH."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    if os.environ.get("COLUMNS", "").isdigit():
        return Console(stderr=stderr, width=shutil.get_terminal_size().columns)
    try:
        if sys.stderr.isatty():
            return Console(stderr=stderr, width=os.get_terminal_size(sys.stderr.fileno()).columns)
    except (OSError, ValueError):
        pass
    return Console(stderr=stderr, width=LOG_WIDTH)


MIN_WIDE = 24  # the least a message column is given before the rows are written as blocks


@dataclasses.dataclass
class Listing:
    """Rows to show under a title: as a table when the console is wide enough for its codes, paths and ids
    whole (and MIN_WIDE characters for each `wide` column, which wraps); else each row as a block of its
    own, which fits any width (a terminal of 80 columns holds no table of six columns)."""

    title: str | None
    columns: tuple[str, ...]
    wide: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = dataclasses.field(default_factory=list)

    def add_row(self, *cells: str) -> None:
        self.rows.append(cells)

    def print(self, out: Console) -> None:
        if self._table_width() <= out.width:
            made = Table(title=self.title)
            for name in self.columns:
                made.add_column(
                    name, overflow="fold", no_wrap=name not in self.wide, ratio=1 if name in self.wide else None
                )
            for row in self.rows:
                made.add_row(*row)
            out.print(made)
            return
        if self.title:
            out.print(self.title, style="bold", markup=False)
        for row in self.rows:
            short = [cell for name, cell in zip(self.columns, row, strict=True) if name not in self.wide and cell]
            out.print("- " + " · ".join(short), markup=False, overflow="fold")
            for name, cell in zip(self.columns, row, strict=True):
                if name in self.wide and cell:
                    out.print(f"  {cell}", markup=False, overflow="fold")

    def _table_width(self) -> int:
        width = 1
        for index, name in enumerate(self.columns):
            longest = max([cell_len(name), *(cell_len(row[index]) for row in self.rows)])  # wide characters: 2
            width += (min(longest, MIN_WIDE) if name in self.wide else longest) + 3
        return width


def table(*columns: str, title: str | None = None, wide: tuple[str, ...] = ()) -> Listing:
    return Listing(title, columns, wide)


def write_json(document: Any) -> None:
    """One JSON document on stdout (dataclasses as objects), UTF-8, then a newline."""
    print(json.dumps(_plain(document), ensure_ascii=False, indent=2))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
