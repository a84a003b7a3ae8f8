"""`hq cosmos migrate-index`: move a Cosmos DB database written before the record index to it (once, when
upgrading; docs/decisions/0056-cosmos-record-index.md). Idempotent: a second run changes nothing,
and an interrupted one is completed by running it again."""

from __future__ import annotations

import argparse
import sys
import time

from backends.factory import Backend, open_backend


def add_group(groups) -> None:
    group = groups.add_parser("cosmos", help="one-off operations on the Cosmos DB database")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    sub.add_parser(
        "migrate-index",
        help="copy the version entries of the layout before the record index into it (run once when upgrading)",
    ).set_defaults(run=migrate_index)


def migrate_index(backend: Backend, args: argparse.Namespace) -> None:
    migrate = getattr(backend.storage, "migrate_record_index", None)
    if backend.settings.backend != "azure" or migrate is None:
        print("Nothing to migrate: the record index is a layout of the Cosmos DB backend (POS_BACKEND=azure).")
        return
    started = time.monotonic()
    print("Copying the version entries of the earlier layout into the record index ...", file=sys.stderr)

    def progress(done) -> None:
        print(
            f"  {done.seen:,} entries read: {done.created:,} copied, {done.updated:,} updated, "
            f"{done.kept:,} already there ({time.monotonic() - started:.0f} s)",
            file=sys.stderr,
        )

    done = migrate(progress)
    print(
        f"Record index migrated: {done.seen:,} entries read, {done.created:,} copied, {done.updated:,} updated, "
        f"{done.kept:,} already there. Running it again changes nothing."
    )
