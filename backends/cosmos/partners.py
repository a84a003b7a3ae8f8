"""HQ's administration of partners in container `partners` (one logical partition per partner): the
partner itself, its registered stores and the payment directions HQ recorded for its custom payment
types; and the OAuth clients that speak for it (each in its own logical partition, keyed by its client id,
so a bearer token's client is one point read away, as a key is). API keys, which live there too, are in
admission.py; master data in masters.py."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceExistsError, CosmosResourceNotFoundError

from backends.admin_rules import require_partner
from backends.cosmos.conditional import update_item
from backends.cosmos.connection import WriterPool
from backends.cosmos.items import chunks, forget, query, read_or_none, without_system_properties
from backends.cosmos.keys import compound_key, partner_key
from core.clients import ANY_ISSUER, ClientInfo, ClientOwner
from core.clock import from_utc_text, to_utc_text
from core.ports import AdminError
from core.records import Partner
from core.stored_json import JsonObject

DIRECTIONS_ID = "payment-directions"
# Up to this many stores, point reads (1 RU each) beat a query: the usual request names one store.
POINT_READS_UP_TO = 3


def partner_of(item: JsonObject) -> Partner:
    return Partner(
        item["partner_id"],
        item["name"],
        bool(item["active"]),
        from_utc_text(item["created_at"]),
        item.get("rate_limit_per_minute"),  # absent on partners added before per-partner limits
    )


def registration_id(store_id: str) -> str:
    return compound_key("registration", store_id)


def _client_key(client_id: str, issuer: str = ANY_ISSUER) -> str:
    """The partition of one OAuth client of one issuer (id "client"); a client mapped before mappings named
    their issuer keeps its partition `client|<client_id>` (decision 0103): nothing to migrate."""
    return compound_key("client", client_id) if issuer == ANY_ISSUER else compound_key("client", issuer, client_id)


class Partners:
    def __init__(self, container: ContainerProxy, writers: WriterPool) -> None:
        self._partners = container
        self._writers = writers

    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        try:
            self._partners.create_item(
                {
                    "id": "partner",
                    "pk": partner_key(partner_id),
                    "type": "partner",
                    "partner_id": partner_id,
                    "name": name,
                    "active": True,
                    "created_at": to_utc_text(now),
                }
            )
        except CosmosResourceExistsError as error:
            forget(error)
            raise AdminError(f"partner {partner_id} already exists") from None
        return Partner(partner_id, name, True, now)

    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        return self._set(partner_id, "active", active)

    def set_partner_rate_limit(self, partner_id: str, per_minute: int | None) -> Partner:
        return self._set(partner_id, "rate_limit_per_minute", per_minute)

    def _set(self, partner_id: str, field: str, value: object) -> Partner:
        """One field of the partner item, patched in place (no read first)."""
        try:
            item = self._partners.patch_item(
                "partner",
                partition_key=partner_key(partner_id),
                patch_operations=[{"op": "set", "path": f"/{field}", "value": value}],
            )
        except CosmosResourceNotFoundError as error:
            forget(error)
            raise AdminError(f"unknown partner {partner_id}") from None
        return partner_of(item)

    def get_partner(self, partner_id: str) -> Partner | None:
        item = read_or_none(self._partners, "partner", partner_key(partner_id))
        return None if item is None else partner_of(item)

    def require_partner(self, partner_id: str) -> Partner:
        return require_partner(self.get_partner, partner_id)

    def list_partners(self) -> list[Partner]:
        items = query(self._partners, "SELECT * FROM c WHERE c.type = 'partner'")
        return sorted((partner_of(item) for item in items), key=lambda partner: partner.partner_id)

    # -- store registrations ----------------------------------------------------------------------

    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        self.require_partner(partner_id)
        known = self.registered_among(partner_id, store_ids)
        if known:
            raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(known))}")
        raced: set[str] = set()

        def register(store_id: str) -> None:
            try:
                self._partners.create_item(
                    {
                        "id": registration_id(store_id),
                        "pk": partner_key(partner_id),
                        "type": "registration",
                        "store_id": store_id,
                        "registered_at": to_utc_text(now),
                    }
                )
            except CosmosResourceExistsError as error:
                forget(error)
                raced.add(store_id)

        self._writers.each(register, sorted(set(store_ids)))
        if raced:
            raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(raced))}")

    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        self.require_partner(partner_id)
        missing = set(store_ids) - self.registered_among(partner_id, store_ids)
        if missing:
            raise AdminError(f"not registered for {partner_id}: {', '.join(sorted(missing))}")

        def unregister(store_id: str) -> None:
            try:
                self._partners.delete_item(registration_id(store_id), partition_key=partner_key(partner_id))
            except CosmosResourceNotFoundError as error:
                forget(error)
                pass  # a concurrent unregister did it

        self._writers.each(unregister, sorted(set(store_ids)))

    def registered_stores(self, partner_id: str) -> list[str]:
        self.require_partner(partner_id)
        pk = partner_key(partner_id)
        items = query(
            self._partners, "SELECT c.store_id FROM c WHERE c.pk = @pk AND c.type = 'registration'", pk, pk=pk
        )
        return sorted(item["store_id"] for item in items)

    def registered_among(self, partner_id: str, store_ids: Collection[str]) -> set[str]:
        ids = sorted(set(store_ids))
        pk = partner_key(partner_id)
        if len(ids) <= POINT_READS_UP_TO:
            return {
                store_id for store_id in ids if read_or_none(self._partners, registration_id(store_id), pk) is not None
            }
        found: set[str] = set()
        for some in chunks(ids):
            items = query(
                self._partners,
                "SELECT c.store_id FROM c WHERE c.pk = @pk AND c.type = 'registration' "
                "AND ARRAY_CONTAINS(@ids, c.store_id)",
                pk,
                pk=pk,
                ids=some,
            )
            found.update(item["store_id"] for item in items)
        return found

    # -- OAuth clients ----------------------------------------------------------------------------

    def add_client(self, partner_id: str, client_id: str, now: dt.datetime, issuer: str = ANY_ISSUER) -> ClientInfo:
        self.require_partner(partner_id)
        try:
            self._partners.create_item(
                {
                    "id": "client",
                    "pk": _client_key(client_id, issuer),
                    "type": "client",
                    "issuer": issuer,
                    "client_id": client_id,
                    "partner_id": partner_id,
                    "added_at": to_utc_text(now),
                }
            )
        except CosmosResourceExistsError as error:
            forget(error)
            known = read_or_none(self._partners, "client", _client_key(client_id, issuer))
            owner = known["partner_id"] if known else "another partner"
            raise AdminError(f"client {client_id} already speaks for partner {owner}") from None
        return ClientInfo(client_id, partner_id, now, issuer)

    def remove_client(self, partner_id: str, client_id: str, issuer: str = ANY_ISSUER) -> None:
        self.require_partner(partner_id)
        known = read_or_none(self._partners, "client", _client_key(client_id, issuer))
        if known is None or known["partner_id"] != partner_id:
            raise AdminError(f"partner {partner_id} has no client {client_id}")
        try:
            self._partners.delete_item("client", partition_key=_client_key(client_id, issuer))
        except CosmosResourceNotFoundError as error:
            forget(error)
            pass  # a concurrent remove did it

    def list_clients(self, partner_id: str) -> list[ClientInfo]:
        self.require_partner(partner_id)
        # HQ only: cross-partition, as the partner's keys are listed.
        items = query(
            self._partners,
            "SELECT c.client_id, c.partner_id, c.added_at, c.issuer FROM c WHERE c.type = 'client' "
            "AND c.partner_id = @partner",
            partner=partner_id,
        )
        clients = [
            ClientInfo(item["client_id"], item["partner_id"], from_utc_text(item["added_at"]), item.get("issuer", ""))
            for item in items
        ]
        return sorted(clients, key=lambda client: (client.added_at, client.client_id, client.issuer))

    def find_client(self, client_id: str, issuer: str = ANY_ISSUER) -> ClientOwner | None:
        """The issuer's own mapping (a point read), else one made for any issuer (a second)."""
        client = (
            None if issuer == ANY_ISSUER else read_or_none(self._partners, "client", _client_key(client_id, issuer))
        )
        client = client or read_or_none(self._partners, "client", _client_key(client_id))
        if client is None:
            return None
        partner = read_or_none(self._partners, "partner", partner_key(client["partner_id"]))
        return None if partner is None else ClientOwner(partner_of(partner), client_id)

    # -- payment directions -----------------------------------------------------------------------

    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        self.require_partner(partner_id)
        pk = partner_key(partner_id)

        def with_direction(current: JsonObject | None) -> JsonObject:
            if current is None:
                return {"id": DIRECTIONS_ID, "pk": pk, "type": DIRECTIONS_ID, "directions": {payment_type: direction}}
            return {
                **without_system_properties(current),
                "directions": {**current["directions"], payment_type: direction},
            }

        update_item(self._partners, DIRECTIONS_ID, pk, with_direction)

    def payment_directions(self, partner_id: str) -> dict[str, int]:
        item = read_or_none(self._partners, DIRECTIONS_ID, partner_key(partner_id))
        return {} if item is None else dict(item["directions"])

    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        self.require_partner(partner_id)

        def without_direction(current: JsonObject | None) -> JsonObject | None:
            if current is None or payment_type not in current["directions"]:
                return None
            return {
                **without_system_properties(current),
                "directions": {code: value for code, value in current["directions"].items() if code != payment_type},
            }

        return update_item(self._partners, DIRECTIONS_ID, partner_key(partner_id), without_direction).after is not None
