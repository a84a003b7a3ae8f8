"""`python -m hq`: HQ operations on the same backend the service uses (settings as the app's).

It talks to storage directly, not through the partner API, so it works whether or not the service
is running. Exit codes: 0 done, 1 refused (unknown partner, duplicate, ...), 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Callable

from core.clock import to_api_text, utc_now
from core.ports import AdminError, BackendUnavailable
from core.settings import Settings, load_local_settings

COMMANDS: dict[tuple[str, str], Callable] = {}
# What would make a partner's code in a comma-separated list ambiguous (see _code_list).
_NEEDS_QUOTES = re.compile(r'[,;"]|^$')


def command(group: str, name: str):
    def register(function):
        COMMANDS[(group, name)] = function
        return function
    return register


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [headers, *rows]]
    return "\n".join(lines)


# -- partners ---------------------------------------------------------------------------------------

@command("partner", "add")
def partner_add(backend, args) -> None:
    _check_ids("partner", [args.partner_id])
    existing = backend.storage.get_partner(args.partner_id)
    if existing is not None:  # exit 1 like every refusal: a script that meant to create it must notice
        _refuse_existing(existing)
    try:
        partner = backend.storage.add_partner(args.partner_id, args.name or args.partner_id, utc_now())
    except AdminError:  # added by someone else since the look-up
        _refuse_existing(backend.storage.get_partner(args.partner_id))
        raise
    print(f"Added partner {partner.partner_id} ({partner.name}), active.")


def _refuse_existing(partner) -> None:
    if partner is not None:
        raise AdminError(f"partner {partner.partner_id} already exists ({partner.name}, "
                         f"{'active' if partner.active else 'inactive'}, added {to_api_text(partner.created_at)}); "
                         "nothing changed. Its keys: python -m hq key list " + partner.partner_id)


@command("partner", "deactivate")
def partner_deactivate(backend, args) -> None:
    backend.storage.set_partner_active(args.partner_id, False)
    print(f"Partner {args.partner_id} is inactive: its requests now get 403 PARTNER_INACTIVE.")


@command("partner", "activate")
def partner_activate(backend, args) -> None:
    backend.storage.set_partner_active(args.partner_id, True)
    print(f"Partner {args.partner_id} is active.")


@command("partner", "list")
def partner_list(backend, args) -> None:
    partners = backend.storage.list_partners()
    if not partners:
        print("No partners yet. Add one with: python -m hq partner add PARTNER_ID --name NAME")
        return
    print(_table(["PARTNER_ID", "NAME", "STATUS", "CREATED_AT"],
                 [[p.partner_id, p.name, "ACTIVE" if p.active else "INACTIVE", to_api_text(p.created_at)]
                  for p in partners]))


# -- keys -------------------------------------------------------------------------------------------

@command("key", "issue")
def key_issue(backend, args) -> None:
    from ingest.access import new_key

    key = new_key()
    backend.storage.add_key(args.partner_id, key.key_id, key.key_hash, utc_now())
    print(f"Issued key {key.key_id} for partner {args.partner_id}.")
    print("The key is shown once, on the next line; only its hash is stored. Send it through a secure channel.")
    print(key.secret)


@command("key", "revoke")
def key_revoke(backend, args) -> None:
    from ingest.access import hash_key, is_key_id

    listing = f"the KEY_ID column of: python -m hq key list {args.partner_id}"
    if not is_key_id(args.key_id):
        # Perhaps the key itself, pasted by mistake: never printed back. Its hash says which key it is.
        owner = backend.storage.find_key(hash_key(args.key_id))
        if owner is not None:
            raise AdminError(f"that is a key, not a key id (not shown here); it is key {owner.key_id} of partner "
                             f"{owner.partner.partner_id}. Revoke it by its id: python -m hq key revoke "
                             f"{owner.partner.partner_id} {owner.key_id}")
        raise AdminError(f"the value given is not a key id (not shown here, it may be a key); key ids look like "
                         f"key_0123456789ab: see {listing}")
    backend.storage.revoke_key(args.partner_id, args.key_id, utc_now())
    print(f"Revoked key {args.key_id} of partner {args.partner_id}: requests with it now get 401.")


@command("key", "list")
def key_list(backend, args) -> None:
    keys = backend.storage.list_keys(args.partner_id)
    if not keys:
        print(f"Partner {args.partner_id} has no keys. Issue one with: python -m hq key issue {args.partner_id}")
        return
    print(_table(["KEY_ID", "STATUS", "CREATED_AT", "REVOKED_AT", "LAST_USED_HOUR"],
                 [[k.key_id, "REVOKED" if k.revoked_at else "ACTIVE", to_api_text(k.created_at),
                   to_api_text(k.revoked_at) if k.revoked_at else "-", _hour(k.last_used_at)] for k in keys]))


def _hour(moment) -> str:
    """The hour (UTC) a key was last used in: kept to the hour, so that noting it costs one write an hour."""
    return "never" if moment is None else moment.strftime("%Y-%m-%dT%H:00Z")


# -- stores -----------------------------------------------------------------------------------------

@command("store", "register")
def store_register(backend, args) -> None:
    """Registers the stores not registered yet; the others are left as they are. Done (exit 0) when all of
    them are registered at the end, whoever registered them."""
    _check_ids("store", args.store_ids)
    _require_partner(backend, args.partner_id)
    new: list[str] = []
    for _ in range(3):  # a concurrent `register` of the same store makes the port refuse: look again
        missing = backend.storage.unregistered(args.partner_id, set(args.store_ids))
        new = [store_id for store_id in args.store_ids if store_id in missing]
        try:
            if new:
                backend.storage.register_stores(args.partner_id, new, utc_now())
            break
        except AdminError:
            continue
    else:
        raise AdminError(f"the stores of {args.partner_id} changed during registration; run it again")
    already = [store_id for store_id in args.store_ids if store_id not in new]
    if new:
        print(f"Registered for {args.partner_id}: {', '.join(new)}")
    if already:
        print(f"Already registered for {args.partner_id}, left as they were: {', '.join(already)}")


@command("store", "unregister")
def store_unregister(backend, args) -> None:
    backend.storage.unregister_stores(args.partner_id, args.store_ids)
    print(f"Unregistered for {args.partner_id}: {', '.join(args.store_ids)}")


@command("store", "list")
def store_list(backend, args) -> None:
    store_ids = backend.storage.registered_stores(args.partner_id)
    if not store_ids:
        print(f"No stores registered for {args.partner_id}.")
        return
    rows = []
    for store_id in store_ids:
        store = backend.storage.get_store(args.partner_id, store_id)
        if store is None:  # registered, but PUT /stores has not sent its master data yet
            rows.append([store_id, "-", "-", "-", "-", "-", "(no master data yet)"])
            continue
        rows.append([store_id, store.currency, store.country_code, store.time_zone, store.workday_start,
                     "yes" if store.prices_include_tax else "no", to_api_text(store.last_modified_at)])
    print(_table(["STORE_ID", "CURRENCY", "COUNTRY", "TIME_ZONE", "WORKDAY_START", "TAX_INCLUDED",
                  "LAST_MODIFIED_AT"], rows))


def _check_ids(what: str, ids: list[str]) -> None:
    """Store ids, and partner ids, follow the store id rule of the wire format (both travel in commands,
    log lines and storage keys); a partner id, HQ's own name, has no spaces either."""
    for value in ids:
        if not _follows_store_id_rule(value):
            raise AdminError(f"invalid {what} id {value!r}: 1 to 100 characters, without / \\ ? # "
                             "or control characters")
        if what == "partner" and any(character.isspace() for character in value):
            raise AdminError(f"invalid partner id {value!r}: no spaces (for example acme-pos)")
    if len(set(ids)) != len(ids):
        raise AdminError(f"a {what} id is given twice")


def _follows_store_id_rule(value: str) -> bool:
    from pydantic import TypeAdapter, ValidationError

    from ingest.wire import StoreId

    try:
        TypeAdapter(StoreId).validate_python(value)
    except ValidationError:
        return False
    return True


def _require_partner(backend, partner_id: str):
    return backend.storage.get_partner(partner_id) or _raise(f"unknown partner {partner_id}")


# -- batches ----------------------------------------------------------------------------------------

def _batch_id(text: str) -> str:
    """Batch ids are UUIDs, stored in their canonical form (lower case, with hyphens)."""
    import uuid

    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise AdminError(f"batch id {text!r} is not a UUID (the batch_id the partner sent)") from None


@command("batch", "show")
def batch_show(backend, args) -> None:
    batch_id = _batch_id(args.batch_id)
    _require_partner(backend, args.partner_id)
    marker = backend.storage.find_batch(args.partner_id, batch_id)
    if marker is None:
        settings = backend.settings
        kept = (f" (or its marker expired: markers are kept {settings.batch_marker_ttl_days} days)"
                if settings.backend == "azure" and settings.batch_marker_ttl_days else "")
        raise AdminError(f"partner {args.partner_id} has no batch {batch_id}{kept}")
    rows = [["batch_id", marker.batch_id], ["partner_id", marker.partner_id], ["kind", marker.kind],
            ["record_count", str(marker.record_count)], ["received_at", to_api_text(marker.received_at)],
            ["store_id", marker.store_id or "-"],
            ["business_date", marker.business_date.isoformat() if marker.business_date else "-"],
            ["batch_seq", "-" if marker.batch_seq is None else str(marker.batch_seq)],
            # Only a digest (SHA-256) is kept, to tell a resend with another body; never the body.
            ["body_digest", "stored (SHA-256 only; the body is not kept)" if marker.body_digest else "none"]]
    if marker.store_id and marker.business_date:
        rows.append(["store_day", _store_day(backend, marker)])
    print(_table(["FIELD", "VALUE"], rows))


def _store_day(backend, marker) -> str:
    """The reconciliation status of the store-day a trade-records batch or daily close belongs to."""
    day = backend.storage.get_closed_day(marker.partner_id, marker.store_id, marker.business_date)
    if day is None:
        return "no daily close received yet"
    status = day.status
    if marker.kind == "daily-close":
        status += (" (this close is the latest)" if day.close_batch_id == marker.batch_id
                   else f" (of a later close, batch {day.close_batch_id}, which replaced this one)")
    return status


# -- reconciliation --------------------------------------------------------------------------------

STATUSES = ("RECEIVED", "MATCHED", "MISMATCHED")


def _date(text: str, what: str = "business date"):
    from ingest.daily_close_status import parse_business_date

    try:
        return parse_business_date(text)
    except Exception:
        raise AdminError(f"{what} {text!r} is not a date in the form YYYY-MM-DD") from None


def _day(args):
    return _date(args.business_date)


def _require_close(backend, args):
    _require_partner(backend, args.partner_id)
    day = backend.storage.get_closed_day(args.partner_id, args.store_id, _day(args))
    if day is None and backend.storage.unregistered(args.partner_id, {args.store_id}):
        raise AdminError(f"store {args.store_id} is not registered for partner {args.partner_id}, so it has no "
                         f"daily close; its stores: python -m hq store list {args.partner_id}")
    if day is None:
        raise AdminError(f"no daily close received for {args.partner_id} {args.store_id} {args.business_date}")
    return day


def _raise(message: str):
    raise AdminError(message)


@command("reconcile", "run")
def reconcile_run(backend, args) -> None:
    from core.reconcile_reruns import request_for
    from reconcile.service import reconcile

    day = _require_close(backend, args)
    reconcile(backend.storage, request_for(args.partner_id, day))
    reconcile_show(backend, args)


@command("reconcile", "show")
def reconcile_show(backend, args) -> None:
    from reconcile.totals import TOTAL_FIELDS

    day = _require_close(backend, args)
    print(f"{args.partner_id} {day.store_id} {day.business_date}: {day.status}"
          + (f" (checked {to_api_text(day.checked_at)})" if day.checked_at else
             f" (not reconciled yet, due {to_api_text(day.due_at)})"))
    details = day.details or {}
    raw = details.get("raw_differences") or {}
    reconciled = day.actual is not None
    rows = [[name, _cell(day.expected.get(name)), _cell((day.actual or {}).get(name)),
             _signed(raw.get(name)) if reconciled else "-", _verdict(name, day, raw)] for name in TOTAL_FIELDS]
    print(_table(["FIELD", "EXPECTED", "ACTUAL", "DIFFERENCE", "RESULT"], rows))
    if reconciled:
        print("DIFFERENCE is actual - expected; counts must be equal, amounts may differ by one minor unit.")
    for line in _detail_lines(details):
        print(line)
    if backend.storage.unregistered(args.partner_id, {day.store_id}):
        print(f"Store {day.store_id} is no longer registered for {args.partner_id}.")


def _cell(value) -> str:
    return "-" if value is None else str(value)


def _signed(value) -> str:
    """A raw difference with its sign: "+1", "-0.01"; "0" when there is none."""
    if value is None:
        return "0"
    text = str(value)
    return text if text.startswith("-") else "+" + text


def _verdict(name: str, day, raw: dict) -> str:
    if name in day.differences:
        return "DIFFERS"
    return "within tolerance" if name in raw else ""


# How the reconciliation's details read in `reconcile show`; anything else is printed by its name.
_DETAIL_LABELS = {"unmapped_source_codes": "unmapped source codes (counted, but not as revenue)",
                  "unknown_payment_types": "payment types of unknown direction (left out of payment_total_amount)",
                  "mapped_source_codes": "source codes counted as"}
_DETAILS_SHOWN_ELSEWHERE = {"raw_differences", "source_codes", "batch_count_received", "batch_count_expected",
                            "batch_seqs_received", "missing_batch_seqs", "records_moved_out"}


def _detail_lines(details: dict) -> list[str]:
    lines = []
    if "batch_count_expected" in details:
        seqs = details.get("batch_seqs_received") or []
        line = (f"batches: {details.get('batch_count_received', len(seqs))} received of "
                f"{details['batch_count_expected']} expected"
                + (f" (batch_seq {', '.join(map(str, seqs))})" if seqs else ""))
        missing = details.get("missing_batch_seqs") or []
        lines.append(line + (f"; missing batch_seq {', '.join(map(str, missing))}" if missing else ""))
    moved = details.get("records_moved_out") or []
    if moved:  # a later version of each moved it: the day no longer counts it
        lines.append("records moved out by a later version (no longer counted here): " + ", ".join(
            f"{_code_list([entry['trade_record_id']])} to {entry['to_store_id']} {entry['to_business_date']}"
            for entry in moved))
    for name, value in details.items():
        if value and name not in _DETAILS_SHOWN_ELSEWHERE:
            lines.append(f"{_DETAIL_LABELS.get(name, name.replace('_', ' '))}: {_readable(value)}")
    return lines


def _readable(value) -> str:
    """Lists and mappings as plain text (no Python brackets), numbers and booleans as JSON; a partner's
    code is quoted only where its end would not show (see _code_list)."""
    if isinstance(value, dict):
        return ", ".join(f"{_code_list([str(key)])}={_readable(item)}" for key, item in value.items())
    if isinstance(value, list):
        if all(isinstance(item, str) for item in value):
            return _code_list(value, ", ")
        return ", ".join(_readable(item) for item in value)
    if isinstance(value, str):
        return _code_list([value])
    return json.dumps(value, ensure_ascii=False)


@command("reconcile", "list")
def reconcile_list(backend, args) -> None:
    from collections import Counter

    if args.date is not None:
        first = last = _date(args.date, "--date")
    else:
        first = None if args.date_from is None else _date(args.date_from, "--from")
        last = None if args.date_to is None else _date(args.date_to, "--to")
        if first and last and first > last:
            raise AdminError(f"--from {first} is after --to {last}")
    if args.partner_id is not None:
        partner_ids = [_require_partner(backend, args.partner_id).partner_id]
    else:
        partner_ids = [partner.partner_id for partner in backend.storage.list_partners()]
    # The port reads one partner's closes (one partition on Cosmos DB), by status when asked; the store
    # and dates are filtered here.
    days = [(partner_id, day) for partner_id in partner_ids
            for day in backend.storage.closed_days(partner_id, args.status)
            if (args.store is None or day.store_id == args.store)
            and (first is None or day.business_date >= first) and (last is None or day.business_date <= last)]
    if args.format != "table":
        _print_days(args.format, days)
        return
    whose = args.partner_id if args.partner_id is not None else "any partner"
    if not days:
        print(f"No daily closes of {whose}{_list_filters(args, first, last)}.")
        return
    print(_table(["PARTNER_ID", "STORE_ID", "BUSINESS_DATE", "STATUS", "CHECKED_AT", "DIFFERENCES", "NOTES"],
                 [[partner_id, day.store_id, day.business_date.isoformat(), day.status,
                   to_api_text(day.checked_at) if day.checked_at else "-",
                   ",".join(day.differences) or "-", _notes(day)] for partner_id, day in days]))
    counts = Counter(day.status for _, day in days)
    print(f"{len(days)} store-day(s): " + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]) + ".")
    if counts["MISMATCHED"]:
        print("Details of one: python -m hq reconcile show "
              f"{args.partner_id if args.partner_id is not None else 'PARTNER_ID'} STORE_ID BUSINESS_DATE")


def _print_days(form: str, days: list) -> None:
    """The list for a script: JSON (an array, null where the table shows "-") or CSV with a header row."""
    import csv

    records = [{"partner_id": partner_id, "store_id": day.store_id, "business_date": day.business_date.isoformat(),
                "status": day.status, "checked_at": to_api_text(day.checked_at) if day.checked_at else None,
                "differences": list(day.differences), "notes": _notes(day)} for partner_id, day in days]
    if form == "json":
        print(json.dumps(records, ensure_ascii=False, indent=2))
        return
    writer = csv.DictWriter(sys.stdout, fieldnames=["partner_id", "store_id", "business_date", "status",
                                                    "checked_at", "differences", "notes"], lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({**record, "checked_at": record["checked_at"] or "",
                         "differences": ",".join(record["differences"])})


def _list_filters(args, first, last) -> str:
    parts = []
    if args.status:
        parts.append(f"with status {args.status}")
    if args.store is not None:
        parts.append(f"for store {args.store}")
    if first and first == last:
        parts.append(f"on {first}")
    else:
        parts += [f"from {first}"] if first else []
        parts += [f"to {last}"] if last else []
    return (" " + " ".join(parts)) if parts else ""


def _notes(day) -> str:
    """What the stored details say about the likely cause of a mismatch, in a few words."""
    details = day.details or {}
    notes = []
    if details.get("missing_batch_seqs"):
        notes.append("missing batch_seq " + ",".join(map(str, details["missing_batch_seqs"])))
    if details.get("unmapped_source_codes"):
        notes.append("unmapped " + _code_list(details["unmapped_source_codes"]))
    if details.get("unknown_payment_types"):
        notes.append("unknown payment_type " + _code_list(details["unknown_payment_types"]))
    if details.get("records_moved_out"):
        notes.append(f"{len(details['records_moved_out'])} record(s) moved out")
    return "; ".join(notes)


def _code_list(codes: list[str], separator: str = ",") -> str:
    """Partner codes joined by commas; a code is quoted (JSON) where a comma, a semicolon, a quote or
    spaces around it would hide where it ends ("FT/Venda" stays as it is, " 01" does not)."""
    return separator.join(json.dumps(code, ensure_ascii=False) if _NEEDS_QUOTES.search(code) or code != code.strip()
                    else code for code in codes)


# -- products ---------------------------------------------------------------------------------------
# A transaction may arrive before its product (spec 4.6): it is accepted, and matched once the product
# arrives. This shows what is still waiting, per store-day.

@command("products", "missing")
def products_missing(backend, args) -> None:
    _require_partner(backend, args.partner_id)
    day = _day(args)
    missing = backend.storage.unknown_products(args.partner_id, args.store_id, day)
    where = f"{args.partner_id} {args.store_id} {day}"
    if not missing:
        print(f"Every product_id of {where} is in the product master (or the day has no trade records).")
        return
    print(_table(["PRODUCT_ID", "ITEM_LINES", "TRADE_RECORDS"],
                 [[product.product_id, str(product.item_lines), str(product.trade_records)] for product in missing]))
    print(f"{len(missing)} product_id(s) of {where} not (yet) in the product master, for this store or for all "
          "stores. The transactions are stored; they match once the partner sends these products with "
          "PUT /products.")


# -- payment types ----------------------------------------------------------------------------------
# The direction of a payment_type says how its amounts count toward payment_total_amount. The
# suggested types (reference/data/payment-types.json) have theirs; a partner's own values (or an
# override of a suggested one) are stored per partner and used by reconciliation and the
# PAYMENT_TYPE_UNKNOWN_DIRECTION warning of POST /trade-records.

DIRECTION_MEANING = {1: "money in, added to payment_total_amount",
                     -1: "money given back, subtracted from payment_total_amount",
                     0: "not counted in payment_total_amount (like DEPOSIT_APPLIED, already counted as DEPOSIT)"}


def _payment_type(code: str) -> str:
    from pydantic import TypeAdapter, ValidationError

    from ingest.wire import FreeString50

    try:
        return TypeAdapter(FreeString50).validate_python(code)
    except ValidationError:
        raise AdminError(f"invalid payment type {code!r}: 1 to 50 characters, exactly as the partner sends it "
                         "in payments[].payment_type") from None


def _suggested_directions() -> dict[str, int]:
    from reference.codes import payment_directions_in_effect

    return payment_directions_in_effect({})


def _reconciled_without(backend, partner_id: str, code: str) -> list:
    """Days already reconciled that left `code` out as a payment type of unknown direction."""
    return [day for day in backend.storage.closed_days(partner_id)
            if day.status != "RECEIVED" and code in (day.details or {}).get("unknown_payment_types", [])]


@command("payment-type", "set")
def payment_type_set(backend, args) -> None:
    code = _payment_type(args.code)
    previous = backend.storage.payment_directions(args.partner_id).get(code)
    backend.storage.set_payment_direction(args.partner_id, code, args.direction)  # refuses an unknown partner
    suggested = _suggested_directions().get(code)
    was = (f" (was {previous})" if previous is not None and previous != args.direction else "")
    print(f"Payment type {code} of partner {args.partner_id}: direction {args.direction}{was}, "
          f"{DIRECTION_MEANING[args.direction]}.")
    if suggested is not None and suggested != args.direction:
        print(f"This overrides the suggested direction {suggested} for this partner.")
    elif suggested is not None:
        print(f"The suggested direction is {suggested} too; the partner's own stays even if the suggested one "
              "changes (payment-type unset removes it).")
    print("New trade records and reconciliations use it from now on; days already reconciled keep their "
          "result until reconciled again.")
    days = _reconciled_without(backend, args.partner_id, code)
    if days:
        print(f"{len(days)} reconciled day(s) left {code} out as unknown; reconcile them again with:")
        for day in days:
            print(f"  python -m hq reconcile run {args.partner_id} {day.store_id} {day.business_date}")


@command("payment-type", "unset")
def payment_type_unset(backend, args) -> None:
    code = _payment_type(args.code)
    suggested = _suggested_directions().get(code)
    if not backend.storage.delete_payment_direction(args.partner_id, code):  # refuses an unknown partner
        also = f"; {code} keeps its suggested direction {suggested}" if suggested is not None else ""
        raise AdminError(f"partner {args.partner_id} has no direction of its own for payment type {code}{also}")
    if suggested is not None:
        after = f"it has the suggested direction {suggested} again"
    else:
        after = ("its payments are left out of payment_total_amount again, and new trade records with it get "
                 "PAYMENT_TYPE_UNKNOWN_DIRECTION")
    print(f"Removed partner {args.partner_id}'s direction for payment type {code}: {after}.")


@command("payment-type", "list")
def payment_type_list(backend, args) -> None:
    _require_partner(backend, args.partner_id)
    own = backend.storage.payment_directions(args.partner_id)
    suggested = _suggested_directions()
    rows = []
    for code, direction in suggested.items():  # in the reference list's order
        if code in own and own[code] != direction:
            rows.append([code, str(own[code]), f"partner (overrides suggested {direction})"])
        else:
            rows.append([code, str(direction), "partner (same as suggested)" if code in own else "suggested"])
    rows += [[code, str(own[code]), "partner"] for code in sorted(set(own) - set(suggested))]
    print(_table(["PAYMENT_TYPE", "DIRECTION", "SOURCE"], rows))
    print("Direction 1: money in (added to payment_total_amount); -1: money given back (subtracted); 0: not "
          "counted. Any other payment_type is left out of payment_total_amount, and trade records with it get "
          "PAYMENT_TYPE_UNKNOWN_DIRECTION, until set with: "
          f"python -m hq payment-type set {args.partner_id} CODE --direction 1|-1|0")


# -- queue ----------------------------------------------------------------------------------------
# These take the reconciliation queue (SQLite or Azure Storage, as the settings select), not storage.

def _request_columns(body: bytes | str) -> list[str]:
    from core import reconcile_messages

    try:
        request = reconcile_messages.decode(body)
    except ValueError:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        return ["(not a reconciliation request)", repr(text[:60]), "", ""]
    return [request.partner_id, request.store_id, request.business_date.isoformat(), request.close_batch_id]


@command("queue", "poison list")
def queue_poison_list(queue, args) -> None:
    import datetime as dt

    poisoned = queue.poison_messages()
    if not poisoned:
        print(f"No poisoned messages on {queue.poison_name}.")
        return
    rows = [[m.message_id, to_api_text(dt.datetime.fromtimestamp(m.inserted_at_us / 1e6, dt.timezone.utc)),
             *_request_columns(m.body)] for m in poisoned]
    print(_table(["MESSAGE_ID", "INSERTED_AT", "PARTNER_ID", "STORE_ID", "BUSINESS_DATE", "CLOSE_BATCH_ID"], rows))
    total = queue.poison_count() if hasattr(queue, "poison_count") else len(poisoned)
    if total > len(poisoned):
        print(f"Showing the first {len(poisoned)} of about {total}; replay them to see the rest, "
              "or replay all with: python -m hq queue poison replay --all")


@command("queue", "poison replay")
def queue_poison_replay(queue, args) -> None:
    if args.all:
        count = (queue.replay_all_poison() if hasattr(queue, "replay_all_poison")
                 else sum(queue.replay_poison(m.message_id) for m in queue.poison_messages()))
        print(f"Replayed {count} poisoned message(s) onto {queue.queue_name}.")
        return
    if not queue.replay_poison(args.message_id):
        raise AdminError(f"no poisoned message {args.message_id} on {queue.poison_name}")
    print(f"Replayed message {args.message_id} onto {queue.queue_name}: it is visible now, "
          "with a fresh dequeue count.")


# -- parser -----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hq", description="HQ operations for the partner POS ingestion service.")
    groups = parser.add_subparsers(dest="group", required=True,
                                   metavar="{partner,key,store,batch,reconcile,products,payment-type,queue}")

    partner = groups.add_parser("partner", help="add, list, activate and deactivate partners")
    sub = partner.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="add a partner (active)")
    add.add_argument("partner_id")
    add.add_argument("--name", help="display name (default: the id)")
    for name, text in (("deactivate", "refuse every request of the partner (403)"),
                       ("activate", "accept the partner's requests again")):
        sub.add_parser(name, help=text).add_argument("partner_id")
    sub.add_parser("list", help="list partners")

    key = groups.add_parser("key", help="issue, revoke and list API keys")
    sub = key.add_subparsers(dest="action", required=True)
    sub.add_parser("issue", help="create a key and print it once").add_argument("partner_id")
    revoke = sub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("partner_id")
    revoke.add_argument("key_id", help="the KEY_ID column of `key list` (key_...), not the key itself")
    sub.add_parser("list", help="key ids, dates and the hour each was last used (never the keys)"
                   ).add_argument("partner_id")

    store = groups.add_parser("store", help="register, unregister and list a partner's stores")
    sub = store.add_subparsers(dest="action", required=True)
    for name, text in (("register", "allow the partner to send data for these stores (those already allowed stay)"),
                       ("unregister", "stop accepting data for these stores")):
        command_parser = sub.add_parser(name, help=text)
        command_parser.add_argument("partner_id")
        command_parser.add_argument("store_ids", nargs="+", metavar="STORE_ID")
    sub.add_parser("list", help="list registered stores").add_argument("partner_id")

    batch = groups.add_parser("batch", help="show what was received under a batch_id")
    sub = batch.add_subparsers(dest="action", required=True)
    show = sub.add_parser("show", help="the batch marker: kind, record count, when, store-day (never the body)")
    show.add_argument("partner_id")
    show.add_argument("batch_id")

    reconcile = groups.add_parser("reconcile", help="reconcile a store-day now, show its result, or list results")
    sub = reconcile.add_subparsers(dest="action", required=True)
    for name, text in (("run", "reconcile the latest daily close now and show the result"),
                       ("show", "expected, actual and differences side by side")):
        command_parser = sub.add_parser(name, help=text)
        for argument in ("partner_id", "store_id", "business_date"):
            command_parser.add_argument(argument)
    listing = sub.add_parser("list", help="daily closes and their status, of one partner or of all")
    listing.add_argument("partner_id", nargs="?", help="only this partner's closes (default: every partner's)")
    listing.add_argument("--format", choices=("table", "json", "csv"), default="table",
                         help="table (default) to read; json or csv for a script")
    listing.add_argument("--status", type=str.upper, choices=STATUSES, help="only closes with this status")
    listing.add_argument("--date", metavar="YYYY-MM-DD", help="only this business date")
    listing.add_argument("--from", dest="date_from", metavar="YYYY-MM-DD", help="business dates from this one")
    listing.add_argument("--to", dest="date_to", metavar="YYYY-MM-DD", help="business dates up to this one")
    listing.add_argument("--store", metavar="STORE_ID", help="only this store")
    listing.set_defaults(usage_error=listing.error)

    products = groups.add_parser("products", help="product_ids of a store-day not (yet) in the product master")
    sub = products.add_subparsers(dest="action", required=True)
    missing = sub.add_parser("missing", help="item lines whose product the partner has not sent yet, by product_id")
    for argument in ("partner_id", "store_id", "business_date"):
        missing.add_argument(argument)

    payment_type = groups.add_parser("payment-type", help="directions of a partner's payment_type values")
    sub = payment_type.add_subparsers(dest="action", required=True)
    set_parser = sub.add_parser("set", help="record how a payment_type counts toward payment_total_amount")
    set_parser.add_argument("partner_id")
    set_parser.add_argument("code", metavar="CODE", help="the payment_type value, as the partner sends it")
    set_parser.add_argument("--direction", type=int, choices=(1, -1, 0), required=True,
                            help="1 money in, -1 money given back, 0 not counted")
    unset = sub.add_parser("unset", help="remove the partner's own direction of a payment_type")
    unset.add_argument("partner_id")
    unset.add_argument("code", metavar="CODE")
    sub.add_parser("list", help="suggested directions and the partner's own").add_argument("partner_id")

    queue = groups.add_parser("queue", help="inspect and replay poisoned reconciliation requests")
    sub = queue.add_subparsers(dest="action", required=True)
    poison = sub.add_parser("poison", help="messages that failed maxDequeueCount times (host.json or its app-setting override)")
    sub = poison.add_subparsers(dest="subaction", required=True)
    sub.add_parser("list", help="poisoned messages and the store-day each one names")
    replay = sub.add_parser("replay", help="put a poisoned message back on the queue, visible now")
    target = replay.add_mutually_exclusive_group(required=True)
    target.add_argument("message_id", nargs="?", help="the MESSAGE_ID that `queue poison list` shows")
    target.add_argument("--all", action="store_true", help="replay every poisoned message")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (args.group == "reconcile" and args.action == "list" and args.date is not None
            and (args.date_from is not None or args.date_to is not None)):
        args.usage_error("--date cannot be combined with --from or --to")
    load_local_settings()
    action = " ".join(filter(None, (args.action, getattr(args, "subaction", None))))
    try:
        settings = Settings.from_env()
        if args.group == "queue":
            from backends.queues import open_reconcile_queue

            COMMANDS[(args.group, action)](open_reconcile_queue(settings), args)
            return 0
        from backends.factory import open_backend

        COMMANDS[(args.group, action)](open_backend(settings), args)
    except AdminError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (BackendUnavailable, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
