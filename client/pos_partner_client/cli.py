"""pos-partner: push a business day, read a day's reconciliation, list the code lists.

    pos-partner push DIR [--no-wait] [--timeout SECONDS] [--format table|json]
    pos-partner validate DIR [--format table|json]
    pos-partner status STORE_ID BUSINESS_DATE [--format table|json]
    pos-partner codes [LIST] [--format table|json]
    pos-partner explain DIR [--format table|json]
    pos-partner listen [--port PORT] [--format table|json]   (webhooks, on this machine: listen.py)

The service's address comes from --base-url or POS_BASE_URL, the key from POS_API_KEY only (a flag would show
it in the process list); it is never printed. A partner HQ moved to OAuth 2.0 sets POS_TOKEN_URL, POS_CLIENT_ID,
POS_CLIENT_SECRET and POS_SCOPE (or POS_RESOURCE, POS_AUDIENCE) instead (client credentials; with POS_API_KEY too,
both are sent and must name the same partner). Exit codes (for schedulers) are EXIT_* below. Tables fit the terminal; `--format json` writes one
JSON document on stdout instead (output.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pos_partner_client import listen
from pos_partner_client.batching import DEFAULT_NAMESPACE
from pos_partner_client.client import CODE_LISTS, PosClient
from pos_partner_client.dayfiles import DayFolder, DayFolderError, read_day_folder
from pos_partner_client.errors import PosApiError
from pos_partner_client.explain_cli import add_explain
from pos_partner_client.models import BatchOutcome, BatchResult, BatchWarning, DayStatus
from pos_partner_client.output import FORMATS, console, table, write_json
from pos_partner_client.tokens import ClientCredentials
from pos_partner_client.transport import RetryPolicy, Wait

EXIT_OK = 0  # everything sent (and, when waited for, every day MATCHED)
EXIT_MISMATCHED = 1  # a day reconciled MISMATCHED: compare the POS's totals with HQ's (`status`)
EXIT_USAGE = 2  # wrong arguments, no key (nor client credentials), or a folder that cannot be read
EXIT_REFUSED = 3  # the service refused a request (4xx problem): fix the data, the key or the store registration
EXIT_UNAVAILABLE = 4  # the service stayed unreachable or busy through every retry: run again later, it is safe
EXIT_PENDING = 5  # a day is not reconciled yet (still RECEIVED at the timeout): ask `status` later
# When several apply, the first of these wins.
EXIT_PRECEDENCE = (EXIT_UNAVAILABLE, EXIT_REFUSED, EXIT_MISMATCHED, EXIT_PENDING)


@dataclass
class Report:
    """What a push met: warnings and problems by request, and the days' results."""

    warnings: list[tuple[str, BatchWarning]] = field(default_factory=list)
    problems: list[tuple[str, PosApiError]] = field(default_factory=list)
    results: list[DayStatus] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)
    answers: dict[str, int] = field(default_factory=dict)  # status (ACCEPTED, VALID, ...) -> requests

    def note(self, label: str, result: BatchResult) -> None:
        self.warnings += [(label, warning) for warning in result.warnings]
        self.answers[result.status] = self.answers.get(result.status, 0) + 1

    def fail(self, label: str, error: PosApiError) -> None:
        self.problems.append((label, error))
        self.codes.add(EXIT_UNAVAILABLE if error.retryable else EXIT_REFUSED)

    def exit_code(self) -> int:
        return next((code for code in EXIT_PRECEDENCE if code in self.codes), EXIT_OK)


CREDENTIAL_SETTINGS = ("POS_TOKEN_URL", "POS_CLIENT_ID", "POS_CLIENT_SECRET")
# What the token is for: at least one (Entra ID: a scope; RFC 8707 providers: the resource; some: an audience).
TARGET_SETTINGS = ("POS_SCOPE", "POS_RESOURCE", "POS_AUDIENCE")


def _credentials() -> ClientCredentials | None:
    """Client credentials from the environment; None when none of their settings is set."""
    values = {name: os.environ.get(name, "") for name in CREDENTIAL_SETTINGS + TARGET_SETTINGS}
    if not any(values.values()):
        return None
    missing = [name for name in CREDENTIAL_SETTINGS if not values[name]]
    if not any(values[name] for name in TARGET_SETTINGS):
        missing.append(" or ".join(TARGET_SETTINGS))
    if missing:
        raise SystemExit(_usage(f"OAuth client credentials need {', '.join(missing)} as well"))
    return ClientCredentials(
        token_url=values["POS_TOKEN_URL"],
        client_id=values["POS_CLIENT_ID"],
        client_secret=values["POS_CLIENT_SECRET"],
        scope=values["POS_SCOPE"],
        resource=values["POS_RESOURCE"],
        audience=values["POS_AUDIENCE"],
    )


def _client(args: argparse.Namespace, console: Console, *, validate_only: bool = False) -> PosClient:
    key = os.environ.get("POS_API_KEY", "")
    credentials = _credentials()
    if not key and credentials is None:
        raise SystemExit(
            _usage(
                "set POS_API_KEY to the key HQ gave you (or POS_TOKEN_URL, POS_CLIENT_ID, POS_CLIENT_SECRET, POS_SCOPE)"
            )
        )
    if not args.base_url:
        raise SystemExit(_usage("give --base-url or set POS_BASE_URL (https://HOST/pos/v1)"))

    def said(wait: Wait) -> None:
        reason = "pacing to the rate limit" if wait.reason == "PACING" else f"{wait.reason}, retry {wait.retry}"
        console.print(f"[yellow]waiting {wait.seconds:.1f}s ({reason})[/yellow]")

    policy = RetryPolicy(max_elapsed_seconds=args.give_up_after)
    return PosClient(
        args.base_url,
        key or None,
        credentials=credentials,
        namespace=args.namespace,
        retry=policy,
        on_wait=said,
        validate_only=validate_only,
    )


def _usage(message: str) -> int:
    print(f"pos-partner: {message}", file=sys.stderr)
    return EXIT_USAGE


def _read(folder: str) -> DayFolder:
    try:
        return read_day_folder(Path(folder))
    except DayFolderError as error:
        raise SystemExit(_usage(str(error))) from None


# --- push ------------------------------------------------------------------------------------------------


def push(args: argparse.Namespace, out: Console, err: Console) -> int:
    return _send(args, out, err, validate_only=False)


def validate(args: argparse.Namespace, out: Console, err: Console) -> int:
    """The same requests as push, with ?validate_only=true: HQ checks everything and stores nothing."""
    return _send(args, out, err, validate_only=True)


def _send(args: argparse.Namespace, out: Console, err: Console, *, validate_only: bool) -> int:
    folder = _read(args.dir)
    client = _client(args, err, validate_only=validate_only)
    try:  # planned once here for the progress bar's total, and to refuse a record too big before sending
        batch_count = sum(len(client.plan_day(day.store_id, day.business_date, day.records)) for day in folder.days)
    except (ValueError, TypeError) as error:
        return _usage(str(error))
    report = Report()
    total = len(folder.masters) + batch_count + len(folder.days)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err
    ) as progress:
        task = progress.add_task("sending", total=total)
        sent_days = _push_all(
            client, folder, report, lambda text: progress.update(task, description=text), lambda: progress.advance(task)
        )
    if not validate_only and args.wait and sent_days:
        _wait(client, sent_days, args.timeout, report, err)
    if args.format == "json":
        write_json(_report_document(folder, report))
    else:
        _print_report(out, folder, report)
    return report.exit_code()


def _push_all(
    client: PosClient, folder: DayFolder, report: Report, describe: Callable[[str], None], advance: Callable[[], None]
) -> list[tuple[str, str]]:
    """Master data first, then each store-day; the (store_id, business_date) of the days sent whole."""
    for kind, body in folder.masters:
        describe(f"PUT {kind}")
        try:
            members = {name: value for name, value in body.items() if name != "batch_id"}
            batch_id = body.get("batch_id")
            if kind == "stores":
                result = client.put_stores(members["stores"], batch_id=batch_id)
            elif kind == "products":
                result = client.put_products(members["products"], members.get("modifier_groups", ()), batch_id=batch_id)
            else:
                result = client.put_mappings(members["mappings"], batch_id=batch_id)
        except PosApiError as error:
            report.fail(f"PUT {kind}", error)
            return []  # the days need their stores, products and mapping first
        report.note(f"PUT {kind}", result)
        advance()
    sent = []
    for day in folder.days:
        name = f"{day.store_id} {day.business_date}"
        describe(f"{name}: {len(day.records)} records")

        def sent_one(outcome: BatchOutcome, name: str = name) -> None:
            report.note(_label(name, outcome), outcome.result)
            advance()

        try:
            client.push_day(day.store_id, day.business_date, day.records, day.close, on_sent=sent_one)
        except PosApiError as error:
            report.fail(name, error)
            if error.retryable:
                break  # the service is out of reach: the other days would fail the same way
            continue
        sent.append((day.store_id, day.business_date))
    return sent


def _label(day: str, outcome: BatchOutcome) -> str:
    return f"{day} daily close" if outcome.kind == "daily-close" else f"{day} batch {outcome.batch_seq}"


def _wait(client: PosClient, days: list[tuple[str, str]], timeout: float, report: Report, err: Console) -> None:
    err.print(f"waiting for the reconciliation of {len(days)} store-day(s) (at most {timeout:g}s each)")
    for store_id, business_date in days:
        try:
            status = client.wait_for_result(store_id, business_date, timeout)
        except PosApiError as error:
            report.fail(f"{store_id} {business_date} result", error)
            continue
        report.results.append(status)
        if status.status == "MISMATCHED":
            report.codes.add(EXIT_MISMATCHED)
        elif not status.final:
            report.codes.add(EXIT_PENDING)


def _print_report(out: Console, folder: DayFolder, report: Report) -> None:
    out.print(f"{len(folder.days)} store-day(s), {folder.record_count} trade records")
    if report.results:
        results = table("store", "business date", "status", "checked at / due at", "differences", title="Results")
        for status in report.results:
            results.add_row(
                status.store_id,
                status.business_date,
                status.status,
                status.checked_at or status.reconciliation_due_at or "",
                ", ".join(status.differences),
            )
        results.print(out)
    if report.warnings:
        warned = table(
            "request", "code", "path", "field", "message", title=f"Warnings ({len(report.warnings)})", wide=("message",)
        )
        for label, warning in report.warnings:
            warned.add_row(label, warning.code, warning.path, warning.field or "", warning.message)
        warned.print(out)
    if report.problems:
        problems = table(
            "request", "status", "code", "path", "message", "request_id", title="Problems", wide=("message",)
        )
        for label, path, message, error in _problem_rows(report):
            problems.add_row(label, str(error.status or ""), error.code, path, message, error.request_id or "")
        problems.print(out)
    if report.answers:
        out.print("answers: " + ", ".join(f"{count} {status}" for status, count in sorted(report.answers.items())))
    out.print(f"result: {_summary(report)}")


def _problem_rows(report: Report) -> list[tuple[str, str, str, PosApiError]]:
    return [
        (label, path, message, error)
        for label, error in report.problems
        for path, message in ([(item.path, item.message) for item in error.errors] or [("", error.detail)])
    ]


def _report_document(folder: DayFolder, report: Report) -> dict[str, Any]:
    """What `_print_report` says, as one JSON document for a scheduler."""
    return {
        "store_days": len(folder.days),
        "trade_records": folder.record_count,
        "answers": report.answers,
        "warnings": [{"request": label, **dataclasses.asdict(warning)} for label, warning in report.warnings],
        "problems": [
            {
                "request": label,
                "status": error.status,
                "code": error.code,
                "path": path,
                "message": message,
                "request_id": error.request_id,
            }
            for label, path, message, error in _problem_rows(report)
        ],
        "results": report.results,
        "result": _summary(report),
        "exit_code": report.exit_code(),
    }


def _summary(report: Report) -> str:
    code = report.exit_code()
    return {
        EXIT_OK: "done" if not report.results else "every store-day MATCHED",
        EXIT_MISMATCHED: "a store-day is MISMATCHED",
        EXIT_REFUSED: "the service refused a request",
        EXIT_UNAVAILABLE: "the service could not be reached; run the same push again later",
        EXIT_PENDING: "not reconciled yet; ask `status` later",
    }[code]


# --- validate, status, codes ---------------------------------------------------------------------------------


def status(args: argparse.Namespace, out: Console, err: Console) -> int:
    client = _client(args, err)
    try:
        day = client.get_day_status(args.store_id, args.business_date)
    except PosApiError as error:
        err.print(f"{error} (request_id {error.request_id})")
        return EXIT_UNAVAILABLE if error.retryable else EXIT_REFUSED
    code = {"MATCHED": EXIT_OK, "MISMATCHED": EXIT_MISMATCHED}.get(day.status, EXIT_PENDING)
    if args.format == "json":
        write_json({**dataclasses.asdict(day), "exit_code": code})
        return code
    out.print(
        f"{day.store_id} {day.business_date}: {day.status}"
        + (f" (checked_at {day.checked_at})" if day.checked_at else "")
        + (f" (due at {day.reconciliation_due_at})" if day.reconciliation_due_at else "")
    )
    if day.expected and day.actual:
        totals = table("field", "POS (expected)", "HQ (actual)", "differs")
        for name in day.expected.__dataclass_fields__:
            totals.add_row(
                name,
                str(getattr(day.expected, name)),
                str(getattr(day.actual, name)),
                "yes" if name in day.differences else "",
            )
        totals.print(out)
    return code


def codes(args: argparse.Namespace, out: Console, err: Console) -> int:
    client = _client(args, err)
    lists = {}
    for code_type in [args.list] if args.list else CODE_LISTS:
        try:
            code_list = client.get_code_list(code_type)
        except PosApiError as error:
            err.print(f"{error} (request_id {error.request_id})")
            return EXIT_UNAVAILABLE if error.retryable else EXIT_REFUSED
        lists[code_type] = code_list
        if args.format == "json":
            continue
        listed = table("code", "name", "meaning", title=f"{code_type} (version {code_list.version})", wide=("meaning",))
        for code in code_list.codes:
            name = code.name.get("en-US") or code.name.get("en") or next(iter(code.name.values()), "")
            meaning = code.description or ""
            if code.is_revenue is not None:
                meaning = f"{'revenue' if code.is_revenue else 'not revenue'}, sign {code.amount_sign}. {meaning}"
            listed.add_row(code.code, name, meaning.strip())
        listed.print(out)
    if args.format == "json":
        write_json(lists)
    return EXIT_OK


# --- arguments -------------------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--base-url",
        default=os.environ.get("POS_BASE_URL"),
        help="the service, ending in /pos/v1 (default: POS_BASE_URL)",
    )
    common.add_argument(
        "--namespace",
        type=uuid.UUID,
        default=uuid.UUID(os.environ.get("POS_BATCH_NAMESPACE") or str(DEFAULT_NAMESPACE)),
        help="your UUID namespace for batch_ids (default: POS_BATCH_NAMESPACE, else the client's)",
    )
    common.add_argument(
        "--give-up-after",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="stop retrying a request (429, 503, no connection) after this long (default 300)",
    )
    common.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table: for people, fitted to the terminal (default); json: one JSON document on stdout, for a scheduler",
    )
    main_parser = argparse.ArgumentParser(prog="pos-partner", description=__doc__.split("\n\n")[0])
    commands = main_parser.add_subparsers(dest="command", required=True)
    push_parser = commands.add_parser(
        "push", parents=[common], help="send a business day's folder and wait for its reconciliation"
    )
    push_parser.add_argument("dir")
    push_parser.add_argument("--no-wait", dest="wait", action="store_false", help="do not wait for the results")
    push_parser.add_argument(
        "--timeout", type=float, default=1200.0, help="seconds to wait for each day's result (default 1200)"
    )
    push_parser.set_defaults(run=push)
    validate_parser = commands.add_parser("validate", parents=[common], help="check a folder without storing")
    validate_parser.add_argument("dir")
    validate_parser.set_defaults(run=validate)
    status_parser = commands.add_parser("status", parents=[common], help="a store-day's reconciliation")
    status_parser.add_argument("store_id")
    status_parser.add_argument("business_date")
    status_parser.set_defaults(run=status)
    codes_parser = commands.add_parser("codes", parents=[common], help="the code lists")
    codes_parser.add_argument("list", nargs="?", choices=CODE_LISTS)
    codes_parser.set_defaults(run=codes)
    add_explain(commands, common)
    listen.add_command(commands)
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    out, err = console(stderr=False), console(stderr=True)
    try:
        code: int = args.run(args, out, err)
    except SystemExit as leaving:
        return int(leaving.code or 0)
    return code


if __name__ == "__main__":
    sys.exit(main())
