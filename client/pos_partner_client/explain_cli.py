"""`pos-partner explain DIR`: for each store-day of a day's folder (the one `push` sent), the transactions that
explain each control total that differs from HQ's (explain.py), as tables or one JSON document."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from pos_partner_client.errors import PosApiError
from pos_partner_client.explain import Explanation, RecordDifference
from pos_partner_client.output import table, write_json

KINDS = (
    ("missing_at_hq", "missing at HQ"),
    ("only_at_hq", "only at HQ"),
    ("different", "different"),
)


def explain_command(args: argparse.Namespace, out: Console, err: Console) -> int:
    from pos_partner_client.cli import EXIT_MISMATCHED, EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE, _client, _read

    folder = _read(args.dir)
    client = _client(args, err)
    explanations = []
    for day in folder.days:
        try:
            explanations.append(client.explain_day(day.store_id, day.business_date, day.records, day.close))
        except PosApiError as error:
            err.print(f"{day.store_id} {day.business_date}: {error} (request_id {error.request_id})")
            return EXIT_UNAVAILABLE if error.retryable else EXIT_REFUSED
    code = EXIT_MISMATCHED if any(one.differences for one in explanations) else EXIT_OK
    if args.format == "json":
        write_json({"store_days": [one.as_json() for one in explanations], "exit_code": code})
    else:
        for one in explanations:
            _print(out, one)
    return code


def _kind_of(kind: str, entry: RecordDifference) -> str:
    if kind != "different":
        return dict(KINDS)[kind]
    if "version" in entry.fields:
        return "a different version counted"
    if "transaction_type" in entry.fields:
        return "a different type"
    return "a different amount"


def _print(out: Console, explanation: Explanation) -> None:
    out.print(
        f"{explanation.store_id} {explanation.business_date}: {explanation.status or 'not reconciled'}", markup=False
    )
    if not explanation.differences:
        out.print("  HQ counted what your records say: nothing to explain")
        return
    for name, amounts in explanation.differences.items():
        out.print(
            f"{name}: HQ - your close = {amounts['reconciliation']}; the transactions below explain "
            f"{amounts['explained']}, the close itself {amounts['unexplained']}",
            markup=False,
        )
        rows = table("transaction", "kind", "yours", "HQ's", "difference", "note", wide=("note",))
        for kind, _ in KINDS:
            for entry in getattr(explanation, kind):
                if name in entry.fields:
                    values = entry.fields[name]
                    detail = "; ".join(_told(entry))
                    rows.add_row(
                        entry.trade_record_id,
                        _kind_of(kind, entry),
                        _text(values["partner"]),
                        _text(values["hq"]),
                        _text(values["difference"]),
                        detail,
                    )
        if rows.rows:
            rows.print(out)
    if explanation.close_vs_records:
        gaps = ", ".join(f"{name} {gap}" for name, gap in explanation.close_vs_records.items())
        out.print(f"your close differs from your own records counted by HQ's rules: {gaps}", markup=False)
        if explanation.counted_by_rule:
            noted = table("transaction", "why HQ counts it so", title="Records HQ counts by a rule your close may not")
            for entry in explanation.counted_by_rule:
                noted.add_row(entry.trade_record_id, entry.note or "")
            noted.print(out)


def _told(entry: RecordDifference) -> list[str]:
    """What the note column says of an entry: the version or type each side has, then its own note."""
    told = [
        f"{name} {entry.fields[name]['partner']} sent, HQ counted {entry.fields[name]['hq']}"
        for name in ("version", "transaction_type")
        if name in entry.fields
    ]
    return told + ([entry.note] if entry.note else [])


def _text(value: Any) -> str:
    return "-" if value is None else str(value)


def add_explain(commands: Any, common: argparse.ArgumentParser) -> None:
    """Register `explain DIR` on pos-partner's subcommands."""
    explain_parser = commands.add_parser(
        "explain", parents=[common], help="the transactions that make a pushed day differ from HQ's count"
    )
    explain_parser.add_argument("dir")
    explain_parser.set_defaults(run=explain_command)
