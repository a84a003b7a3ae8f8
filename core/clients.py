"""The shapes the ports carry for OAuth 2.0 bearer tokens: the clients that speak for a partner, and the
identity providers' signing keys. Plain frozen dataclasses, as in core/records.py."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from core.records import Partner


@dataclass(frozen=True)
class ClientInfo:
    """An OAuth 2.0 client (the `azp` or `appid` of its access tokens) that speaks for a partner."""

    client_id: str
    partner_id: str
    added_at: dt.datetime


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
