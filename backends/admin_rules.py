"""What both storage adapters do alike around HQ's administration (one copy, not one per adapter)."""

from __future__ import annotations

from collections.abc import Callable

from core.ports import AdminError
from core.records import Partner


def require_partner(get_partner: Callable[[str], Partner | None], partner_id: str) -> Partner:
    """The partner, or the AdminError HQ's command line shows when it does not exist."""
    partner = get_partner(partner_id)
    if partner is None:
        raise AdminError(f"unknown partner {partner_id}")
    return partner
