"""What admits a request, in container `partners`: API keys (each in its own logical partition, keyed
by its hash, so a request's key is one point read away) and the per-partner rate-limit windows."""

from __future__ import annotations

import datetime as dt

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceExistsError, CosmosResourceNotFoundError

from backends.cosmos.conditional import TRY_AGAIN, _TryAgain, retry_until_settled, update_item
from backends.cosmos.items import forget, query, read_or_none, without_system_properties
from backends.cosmos.keys import api_key_key, partner_key
from backends.cosmos.partners import Partners, partner_of
from core.clock import from_utc_text, from_utc_text_or_none, to_utc_text
from core.ports import AdminError
from core.records import ApiKeyInfo, KeyOwner
from core.stored_json import JsonObject

# A rate-limit window is counted for 60 s; its counter then only has to outlive clock skew.
RATE_WINDOW_TTL_SECONDS = 120


class Admission:
    def __init__(self, container: ContainerProxy, partners: Partners) -> None:
        self._partners = container
        self._partner_repository = partners

    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        self._partner_repository.require_partner(partner_id)
        try:
            self._partners.create_item(
                {
                    "id": "key",
                    "pk": api_key_key(key_hash),
                    "type": "key",
                    "partner_id": partner_id,
                    "key_id": key_id,
                    "key_hash": key_hash,
                    "created_at": to_utc_text(now),
                    "revoked_at": None,
                    "last_used_at": None,
                }
            )
        except CosmosResourceExistsError as error:
            forget(error)
            raise AdminError(f"key {key_id} already exists") from None
        return ApiKeyInfo(key_id, partner_id, now, None)

    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        self._partner_repository.require_partner(partner_id)
        # Found by a query (HQ only, cross-partition), then changed in its own partition.
        found = query(
            self._partners,
            "SELECT c.key_hash FROM c WHERE c.type = 'key' AND c.partner_id = @partner AND c.key_id = @key",
            partner=partner_id,
            key=key_id,
        )
        if not found:
            raise AdminError(f"partner {partner_id} has no key {key_id}")

        def revoked(current: JsonObject | None) -> JsonObject:
            if current is None:
                raise AdminError(f"partner {partner_id} has no key {key_id}")
            if current["revoked_at"] is not None:
                raise AdminError(f"key {key_id} is already revoked")
            return {**without_system_properties(current), "revoked_at": to_utc_text(now)}

        written = update_item(self._partners, "key", api_key_key(found[0]["key_hash"]), revoked).after
        assert written is not None  # revoked() writes or raises
        return ApiKeyInfo(key_id, partner_id, from_utc_text(written["created_at"]), now)

    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        self._partner_repository.require_partner(partner_id)
        items = query(
            self._partners,
            "SELECT c.key_id, c.partner_id, c.created_at, c.revoked_at, c.last_used_at "
            "FROM c WHERE c.type = 'key' AND c.partner_id = @partner",
            partner=partner_id,
        )
        items.sort(key=lambda item: (item["created_at"], item["key_id"]))
        # A key item written before last_used_at existed has no such property.
        return [
            ApiKeyInfo(
                item["key_id"],
                item["partner_id"],
                from_utc_text(item["created_at"]),
                from_utc_text_or_none(item["revoked_at"]),
                from_utc_text_or_none(item.get("last_used_at")),
            )
            for item in items
        ]

    def find_key(self, key_hash: str) -> KeyOwner | None:
        key = read_or_none(self._partners, "key", api_key_key(key_hash))
        if key is None:
            return None
        partner = read_or_none(self._partners, "partner", partner_key(key["partner_id"]))
        if partner is None:
            return None
        return KeyOwner(
            partner_of(partner),
            key["key_id"],
            key["key_hash"],
            key["revoked_at"] is not None,
            from_utc_text_or_none(key.get("last_used_at")),
        )

    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        # Read, compare, replace on the ETag read: a concurrent revocation is never overwritten, and an
        # earlier hour never replaces a later one. At most once an hour per key (the caller decides).
        text = to_utc_text(hour)

        def used(current: JsonObject | None) -> JsonObject | None:
            if current is None or (current.get("last_used_at") or "") >= text:
                return None
            return {**without_system_properties(current), "last_used_at": text}

        update_item(self._partners, "key", api_key_key(key_hash), used)

    def count_request(self, partner_id: str, window_start: int) -> int:
        # A patch increment is atomic on the server: concurrent instances never lose a count.
        item_id, pk = f"rate|{window_start}", partner_key(partner_id)

        def attempt(_number: int) -> int | _TryAgain:
            try:
                item = self._partners.patch_item(
                    item_id, partition_key=pk, patch_operations=[{"op": "incr", "path": "/count", "value": 1}]
                )
                return int(item["count"])
            except CosmosResourceNotFoundError as error:
                forget(error)
                pass
            try:  # first request of the window; old windows expire by TTL
                self._partners.create_item(
                    {"id": item_id, "pk": pk, "type": "rate-window", "count": 1, "ttl": RATE_WINDOW_TTL_SECONDS}
                )
                return 1
            except CosmosResourceExistsError as error:
                forget(error)
                return TRY_AGAIN

        return retry_until_settled(attempt, f"the request count of {partner_id}")
