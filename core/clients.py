"""The shapes the ports carry for OAuth 2.0 bearer tokens: the clients that speak for a partner, and the
identity providers' signing keys. Plain frozen dataclasses, as in core/records.py."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from core.records import Partner

# The issuer of a client mapped before mappings named one (decision 0103): it speaks for its partner whatever
# the issuer, as every mapping did then, until HQ maps it again for its issuer and removes this one.
ANY_ISSUER = ""


@dataclass(frozen=True)
class ClientInfo:
    """An OAuth 2.0 client (the `client_id`, `azp` or `appid` of its access tokens) of one issuer, that speaks
    for a partner. A client id is the issuer's: the same id at another issuer is another client."""

    client_id: str
    partner_id: str
    added_at: dt.datetime
    issuer: str = ANY_ISSUER


@dataclass(frozen=True)
class ClientOwner:
    """The result of looking up a token's client: the partner it speaks for, as stored now."""

    partner: Partner
    client_id: str


@dataclass(frozen=True)
class SigningKey:
    """An identity provider's public key (a `cryptography` key object) and the algorithms it may verify."""

    key_id: str | None
    public_key: Any
    algorithms: tuple[str, ...]
