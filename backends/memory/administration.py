"""HQ administration (partners, keys, OAuth clients, registered stores, payment directions) and request
admission (key and client look-up, rate-limit counts) of the memory storage."""

from __future__ import annotations

import dataclasses
import datetime as dt

from backends.admin_rules import require_partner
from backends.memory.state import MemoryState, StoredKey
from core.clients import ANY_ISSUER, ClientInfo, ClientOwner
from core.ports import AdminError
from core.records import ApiKeyInfo, KeyOwner, Partner


class MemoryAdministration(MemoryState):
    # -- HQ administration ------------------------------------------------------------------------

    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        with self._lock:
            if partner_id in self._partners:
                raise AdminError(f"partner {partner_id} already exists")
            self._partners[partner_id] = Partner(partner_id, name, True, now)
            return self._partners[partner_id]

    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        with self._lock:
            partner = require_partner(self.get_partner, partner_id)
            self._partners[partner_id] = dataclasses.replace(partner, active=active)
            return self._partners[partner_id]

    def set_partner_rate_limit(self, partner_id: str, per_minute: int | None) -> Partner:
        with self._lock:
            partner = require_partner(self.get_partner, partner_id)
            self._partners[partner_id] = dataclasses.replace(partner, rate_limit_per_minute=per_minute)
            return self._partners[partner_id]

    def get_partner(self, partner_id: str) -> Partner | None:
        with self._lock:
            return self._partners.get(partner_id)

    def list_partners(self) -> list[Partner]:
        with self._lock:
            return [self._partners[partner_id] for partner_id in sorted(self._partners)]

    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            if key_hash in self._keys or any(key.key_id == key_id for key in self._keys.values()):
                raise AdminError(f"key {key_id} already exists")
            self._keys[key_hash] = StoredKey(key_id, partner_id, key_hash, now)
            return ApiKeyInfo(key_id, partner_id, now, None)

    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            key = next(
                (key for key in self._keys.values() if key.partner_id == partner_id and key.key_id == key_id), None
            )
            if key is None:
                raise AdminError(f"partner {partner_id} has no key {key_id}")
            if key.revoked_at is not None:
                raise AdminError(f"key {key_id} is already revoked")
            key.revoked_at = now
            return ApiKeyInfo(key_id, partner_id, key.created_at, now)

    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            keys = sorted(
                (key for key in self._keys.values() if key.partner_id == partner_id),
                key=lambda key: (key.created_at, key.key_id),
            )
            return [
                ApiKeyInfo(key.key_id, partner_id, key.created_at, key.revoked_at, key.last_used_at) for key in keys
            ]

    def add_client(self, partner_id: str, client_id: str, now: dt.datetime, issuer: str = ANY_ISSUER) -> ClientInfo:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            known = self._clients.get((issuer, client_id))
            if known is not None:
                raise AdminError(f"client {client_id} already speaks for partner {known.partner_id}")
            self._clients[(issuer, client_id)] = ClientInfo(client_id, partner_id, now, issuer)
            return self._clients[(issuer, client_id)]

    def remove_client(self, partner_id: str, client_id: str, issuer: str = ANY_ISSUER) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            known = self._clients.get((issuer, client_id))
            if known is None or known.partner_id != partner_id:
                raise AdminError(f"partner {partner_id} has no client {client_id}")
            del self._clients[(issuer, client_id)]

    def list_clients(self, partner_id: str) -> list[ClientInfo]:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            clients = (client for client in self._clients.values() if client.partner_id == partner_id)
            return sorted(clients, key=lambda client: (client.added_at, client.client_id, client.issuer))

    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            registered = self._stores_registered[partner_id]
            known = set(store_ids) & registered.keys()
            if known:
                raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(known))}")
            registered.update(dict.fromkeys(store_ids, now))

    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            registered = self._stores_registered[partner_id]
            missing = set(store_ids) - registered.keys()
            if missing:
                raise AdminError(f"not registered for {partner_id}: {', '.join(sorted(missing))}")
            for store_id in store_ids:
                registered.pop(store_id, None)

    def registered_stores(self, partner_id: str) -> list[str]:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            return sorted(self._stores_registered[partner_id])

    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            self._directions[partner_id][payment_type] = direction

    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        with self._lock:
            require_partner(self.get_partner, partner_id)
            return self._directions[partner_id].pop(payment_type, None) is not None

    # -- request admission ------------------------------------------------------------------------

    def find_key(self, key_hash: str) -> KeyOwner | None:
        with self._lock:
            key = self._keys.get(key_hash)
            if key is None:
                return None
            return KeyOwner(
                self._partners[key.partner_id], key.key_id, key.key_hash, key.revoked_at is not None, key.last_used_at
            )

    def find_client(self, client_id: str, issuer: str = ANY_ISSUER) -> ClientOwner | None:
        with self._lock:
            client = self._clients.get((issuer, client_id)) or self._clients.get((ANY_ISSUER, client_id))
            return None if client is None else ClientOwner(self._partners[client.partner_id], client_id)

    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        with self._lock:
            key = self._keys.get(key_hash)
            if key is not None and (key.last_used_at is None or key.last_used_at < hour):
                key.last_used_at = hour

    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]:
        with self._lock:
            return set(store_ids) - self._stores_registered.get(partner_id, {}).keys()

    def count_request(self, partner_id: str, window_start: int) -> int:
        with self._lock:
            count = self._request_counts.get((partner_id, window_start), 0) + 1
            self._request_counts[(partner_id, window_start)] = count
            if count == 1:  # first request of a new window: forget the old ones
                for old in [key for key in self._request_counts if key[0] == partner_id and key[1] < window_start]:
                    del self._request_counts[old]
            return count

    def ping(self) -> None:
        """Memory is always reachable."""
