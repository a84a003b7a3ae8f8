"""Changing an item that other instances may change at the same time, without transactions: read it,
decide, then write on the ETag that was read (or create it when absent). A concurrent writer in between
makes the write fail (412, or 409/404 when the item was created or deleted meanwhile), and we read and
decide again. Every read-modify-write of the adapter goes through update_item (only the version entry's
clean-up is a single conditional replace a newer writer may win), and every retry of the adapter is
bounded by ETAG_RETRY_LIMIT (retry_until_settled)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from azure.core import MatchConditions
from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import (
    CosmosAccessConditionFailedError,
    CosmosResourceExistsError,
    CosmosResourceNotFoundError,
)

from backends.cosmos.items import forget, read_or_none, stored_version
from core.stored_json import JsonObject
from core.versions import Version

# Attempts before giving up (503, the caller retries): only pathological contention on one item gets there.
ETAG_RETRY_LIMIT = 50

T = TypeVar("T")


class ContentionNotSettled(Exception):
    """Concurrent writers kept changing one item for ETAG_RETRY_LIMIT attempts in a row."""


class _TryAgain:
    """What an attempt returns when a concurrent writer got in between."""


TRY_AGAIN = _TryAgain()


def retry_until_settled(attempt: Callable[[int], T | _TryAgain], what: str) -> T:
    """attempt(0), attempt(1), ... until one returns something else than TRY_AGAIN; at most ETAG_RETRY_LIMIT."""
    for number in range(ETAG_RETRY_LIMIT):
        outcome = attempt(number)
        if not isinstance(outcome, _TryAgain):
            return outcome
    raise ContentionNotSettled(f"too many concurrent writes to {what}")


@dataclass(frozen=True)
class Update:
    """What update_item did."""

    before: JsonObject | None  # the item the last decision was taken on (None: there was none)
    after: JsonObject | None  # the item as written (with its new ETag); None when the change left it as it was


def update_item(
    container: ContainerProxy,
    item_id: str,
    partition_key: str,
    change: Callable[[JsonObject | None], JsonObject | None],
    *,
    create_first: bool = False,
    first: JsonObject | None | _TryAgain = TRY_AGAIN,
) -> Update:
    """Replace the item by change(stored item), conditioned on the ETag read, or create change(None) when
    there is none; `change` returns None to leave the item as it is (and may raise to refuse). Called again
    on what a concurrent writer left. `create_first`: the item is most likely absent, so the first attempt
    creates it without reading (one read less). `first`: the item as the caller just read it (None: absent),
    which the first attempt decides on instead of reading it again."""
    if create_first:
        first = None

    def attempt(number: int) -> Update | _TryAgain:
        current = read_or_none(container, item_id, partition_key) if number or isinstance(first, _TryAgain) else first
        wanted = change(current)
        if wanted is None:
            return Update(current, None)
        try:
            if current is None:
                return Update(None, container.create_item(wanted))
            return Update(
                current,
                container.replace_item(
                    item_id, wanted, etag=current["_etag"], match_condition=MatchConditions.IfNotModified
                ),
            )
        except (CosmosResourceExistsError, CosmosAccessConditionFailedError, CosmosResourceNotFoundError) as error:
            forget(error)
            return TRY_AGAIN

    # Named by id and container only: a partition key may hold a key's hash, which is not logged.
    return retry_until_settled(attempt, f"item {item_id!r} of {container.id}")


def write_if_replaces(
    container: ContainerProxy,
    item: JsonObject,
    version: Version,
    replaces: Callable[[Version, Version | None], bool],
    *,
    create_first: bool = False,
) -> bool:
    """Create `item` (of `version`), or replace the stored one when replaces(version, its version): one of
    core/versions' rules. False when the stored item stays."""
    return (
        update_item(
            container,
            item["id"],
            item["pk"],
            lambda current: item if replaces(version, None if current is None else stored_version(current)) else None,
            create_first=create_first,
        ).after
        is not None
    )
