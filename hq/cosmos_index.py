"""`hq cosmos migrate-index`: move a Cosmos DB database written before the record index to it (once, when
upgrading; docs/decisions/0056-cosmos-record-index.md). `hq cosmos relayout`: move the closes and results
left in partners' partitions of `daily-closes` to their stores' (decision 0093). Both idempotent: a second
run changes nothing, and an interrupted one is completed by running it again."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from backends.factory import Backend, open_backend
from hq.arguments import Subcommands
from hq.output import progress_lines

if TYPE_CHECKING:
    from backends.cosmos.close_moves import Relayout
    from backends.cosmos.index_migration import Migrated


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("cosmos", help="one-off operations on the Cosmos DB database")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    sub.add_parser(
        "migrate-index",
        help="copy the version entries of the layout before the record index into it (run once when upgrading)",
    ).set_defaults(run=migrate_index)
    sub.add_parser(
        "relayout",
        help="move closes and results to their stores' partitions (once when upgrading; the app moves any it reads)",
    ).set_defaults(run=relayout)


def migrate_index(backend: Backend, args: argparse.Namespace) -> None:
    migrate = getattr(backend.storage, "migrate_record_index", None)
    if backend.settings.backend != "azure" or migrate is None:
        print("Nothing to migrate: the record index is a layout of the Cosmos DB backend (POS_BACKEND=azure).")
        return
    print("Copying the version entries of the earlier layout into the record index ...", file=sys.stderr)

    def step(done: Migrated) -> str:
        return (
            f"{done.seen:,} entries read: {done.created:,} copied, {done.updated:,} updated, "
            f"{done.kept:,} already there"
        )

    done = migrate(progress_lines(step))
    print(
        f"Record index migrated: {done.seen:,} entries read, {done.created:,} copied, {done.updated:,} updated, "
        f"{done.kept:,} already there. Running it again changes nothing."
    )


def relayout(backend: Backend, args: argparse.Namespace) -> None:
    move = getattr(backend.storage, "relayout_closes", None)
    if backend.settings.backend != "azure" or move is None:
        print(
            "Nothing to move: the partitions of daily-closes are a layout of the Cosmos DB backend (POS_BACKEND=azure)."
        )
        return
    print("Moving closes from partners' partitions of daily-closes to their stores' ...", file=sys.stderr)

    def step(done: Relayout) -> str:
        return f"{done.seen:,} closes found in the old place: {done.moved:,} moved, {done.left:,} changed meanwhile"

    done = move(progress_lines(step))
    if done.left:
        print(f"{done.moved:,} closes moved; {done.left:,} changed while moved: run it again to move them.")
        return
    print(
        f"daily-closes relayout done: {done.moved:,} closes moved, none left in the old place. "
        "Running it again changes nothing."
    )
