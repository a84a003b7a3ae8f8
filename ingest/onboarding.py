"""HQ's onboarding use cases: add a partner, issue and revoke its keys, map its OAuth clients, register its
stores.

`python -m hq` calls these (tests may call them without the command line). A refusal is an AdminError;
the two that the command line words with more help carry what it needs (PartnerExists, NotAKeyId).
Partners and stores are checked by the storage adapters too (a write for an unknown partner is refused).
"""

from __future__ import annotations

import datetime as dt

from pydantic import TypeAdapter, ValidationError

from core.clients import ANY_ISSUER, ClientInfo
from core.ports import AdminError, Storage
from core.records import KeyOwner, Partner
from ingest.access import NewKey, hash_key, is_key_id, new_key
from ingest.wire.scalars import StoreId

REGISTER_ATTEMPTS = 3  # a concurrent registration of the same store makes the port refuse: look again
MAX_CLIENT_ID_CHARS = 255


class PartnerExists(AdminError):
    def __init__(self, partner: Partner) -> None:
        super().__init__(f"partner {partner.partner_id} already exists")
        self.partner = partner


class NotAKeyId(AdminError):
    """The value given to revoke is not a key id; `owner` is the key's owner when it is a key itself."""

    def __init__(self, owner: KeyOwner | None) -> None:
        super().__init__("not a key id")
        self.owner = owner


def check_ids(what: str, ids: list[str]) -> None:
    """Store ids, and partner ids, follow the store id rule of the wire format (both travel in commands,
    log lines and storage keys); a partner id, HQ's own name, has no spaces either."""
    for value in ids:
        if not _follows_store_id_rule(value):
            raise AdminError(
                f"invalid {what} id {value!r}: 1 to 100 characters, without / \\ ? # or control characters"
            )
        if what == "partner" and any(character.isspace() for character in value):
            raise AdminError(f"invalid partner id {value!r}: no spaces (for example acme-pos)")
    if len(set(ids)) != len(ids):
        raise AdminError(f"a {what} id is given twice")


def _follows_store_id_rule(value: str) -> bool:
    try:
        TypeAdapter(StoreId).validate_python(value)
    except ValidationError:
        return False
    return True


def add_partner(storage: Storage, partner_id: str, name: str, now: dt.datetime) -> Partner:
    """A new partner, active; PartnerExists when the id is taken (a script that meant to create it must
    notice), also when someone else added it since the look-up."""
    check_ids("partner", [partner_id])
    existing = storage.get_partner(partner_id)
    if existing is not None:
        raise PartnerExists(existing)
    try:
        return storage.add_partner(partner_id, name, now)
    except AdminError as refused:
        added = storage.get_partner(partner_id)
        if added is not None:
            raise PartnerExists(added) from refused
        raise


def issue_key(storage: Storage, partner_id: str, now: dt.datetime) -> NewKey:
    """A new key for the partner: only its hash is stored, so the secret returned here is the only copy."""
    key = new_key()
    storage.add_key(partner_id, key.key_id, key.key_hash, now)
    return key


def revoke_key(storage: Storage, partner_id: str, key_id: str, now: dt.datetime) -> None:
    """Revokes the key by its id. A value that is not a key id may be a key pasted by mistake: its hash
    says whose key it is (NotAKeyId.owner), and it is never echoed."""
    if not is_key_id(key_id):
        raise NotAKeyId(storage.find_key(hash_key(key_id)))
    storage.revoke_key(partner_id, key_id, now)


def add_client(
    storage: Storage, partner_id: str, client_id: str, now: dt.datetime, issuer: str = ANY_ISSUER
) -> ClientInfo:
    """Let the OAuth client's bearer tokens speak for the partner. A client id is whatever the identity
    provider assigned (Entra ID: the application's GUID), kept exactly as given: checked only for what
    cannot be one (empty, too long, control characters, surrounding spaces)."""
    check_client_id(client_id)
    return storage.add_client(partner_id, client_id, now, issuer)


def check_client_id(client_id: str) -> None:
    if not client_id or len(client_id) > MAX_CLIENT_ID_CHARS:
        raise AdminError(f"invalid client id: 1 to {MAX_CLIENT_ID_CHARS} characters")
    if client_id != client_id.strip() or not client_id.isprintable():
        raise AdminError("invalid client id: no control characters, nor spaces around it")


def register_stores(storage: Storage, partner_id: str, store_ids: list[str], now: dt.datetime) -> list[str]:
    """Registers the stores (ids checked by check_ids) not registered yet, the others are left as they
    are; returns those this call registered. Done when all of them are registered at the end, whoever
    registered them."""
    for _ in range(REGISTER_ATTEMPTS):
        missing = storage.unregistered(partner_id, set(store_ids))
        new = [store_id for store_id in store_ids if store_id in missing]
        try:
            if new:
                storage.register_stores(partner_id, new, now)
            return new
        except AdminError:
            continue
    raise AdminError(f"the stores of {partner_id} changed during registration; run it again")
