"""Closes and results move from the partner's partition of `daily-closes` (the layout before decision 0093)
to their store's (`c|partner|store`), online: every access to a store-day's close first moves it when it
is still in the old place (create in the new place, then delete the old one on its ETag), and
`hq cosmos relayout` moves the rest and then records that nothing is left (a process that finds none left
records it too), after which no access looks in the old place again. Queries by partner or across
partners select by properties, not by key, so they read both places meanwhile (an item caught in both is
counted once)."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from azure.core import MatchConditions
from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import (
    CosmosAccessConditionFailedError,
    CosmosResourceExistsError,
    CosmosResourceNotFoundError,
)

from backends.cosmos.items import forget, query, read_or_none, stream, without_system_properties
from backends.cosmos.keys import close_id, close_key, partner_key
from core.stored_json import JsonObject

# Closes in a partner's partition: its key is the escaped partner id, which holds no "|" (keys.key_part),
# where a store's partition key starts "c|".
OLD_PLACE = "c.type = 'close' AND NOT STARTSWITH(c.pk, 'c|')"
DONE_ID, DONE_KEY = "closes-moved", "layout"  # written by relayout once no close is left in the old place
RECHECK_SECONDS = 600  # how long a process trusts "not done yet" before reading it again


def each_day_once(items: list[JsonObject]) -> list[JsonObject]:
    """Closes read by a query over both places (with their `pk`), each store-day once: a close caught
    between its copy and the old one's deletion is the same close twice, and the copy is kept."""
    kept: dict[tuple[str, str, str], JsonObject] = {}
    for item in items:
        day = (item["partner_id"], item["store_id"], item["business_date"])
        if day not in kept or kept[day]["pk"] == partner_key(item["partner_id"]):
            kept[day] = item
    return list(kept.values())


class CloseMoves:
    def __init__(self, container: ContainerProxy) -> None:
        self._closes = container
        self._done = False
        self._checked_at = float("-inf")
        self._lock = threading.Lock()

    def _old_place_may_hold(self) -> bool:
        if self._done:
            return False
        with self._lock:
            if time.monotonic() - self._checked_at > RECHECK_SECONDS:
                self._done = read_or_none(self._closes, DONE_ID, DONE_KEY) is not None or self._none_left()
                self._checked_at = time.monotonic()
        return not self._done

    def _none_left(self) -> bool:
        """A database with no close in the old place (a new one, or one relaid out) is marked so at once:
        one query across partitions, then nothing more a request."""
        if query(self._closes, f"SELECT TOP 1 c.id FROM c WHERE {OLD_PLACE}"):
            return False
        self._closes.upsert_item({"id": DONE_ID, "pk": DONE_KEY, "type": "layout"})
        return True

    def here(self, partner_id: str, store_id: str, business_date: dt.date) -> str:
        """The store's partition of the close, after moving it there if it was still in the partner's."""
        key = close_key(partner_id, store_id)
        if self._old_place_may_hold():
            old = read_or_none(self._closes, close_id(store_id, business_date), partner_key(partner_id))
            if old is not None:
                move(self._closes, old, key)
        return key


def move(container: ContainerProxy, old: JsonObject, key: str) -> bool:
    """Copy an item of the old place to the new one (unless it is there already: a move cut short), then
    delete it from the old place on its ETag. False when it changed meanwhile (the next access moves it)."""
    try:
        container.create_item({**without_system_properties(old), "pk": key})
    except CosmosResourceExistsError as error:
        forget(error)
        pass  # copied before; the copy is the close from now on
    try:
        container.delete_item(
            old["id"], partition_key=old["pk"], etag=old["_etag"], match_condition=MatchConditions.IfNotModified
        )
    except CosmosResourceNotFoundError as error:
        forget(error)
        pass
    except CosmosAccessConditionFailedError as error:
        forget(error)
        return False
    return True


@dataclass
class Relayout:
    seen: int = 0  # closes still in a partner's partition when read
    moved: int = 0
    left: int = 0  # changed while moved: a second run moves them


def relayout_closes(container: ContainerProxy, progress: Callable[[Relayout], None], every: int = 1000) -> Relayout:
    """Move every close left in a partner's partition (a cross-partition query on `type`, selected by
    their key being the partner's), then record that none is left; idempotent and safe to stop."""
    done = Relayout()
    for item in stream(container, f"SELECT * FROM c WHERE {OLD_PLACE}"):
        if item["pk"] != partner_key(item["partner_id"]):
            continue
        done.seen += 1
        if move(container, item, close_key(item["partner_id"], item["store_id"])):
            done.moved += 1
        else:
            done.left += 1
        if done.seen % every == 0:
            progress(done)
    if done.left == 0:
        container.upsert_item({"id": DONE_ID, "pk": DONE_KEY, "type": "layout"})
    progress(done)
    return done
