"""Structured logs and counters of the service; Application Insights when it is configured.

Every request and reconciliation logs one record whose fields are attributes (`extra`): with
OpenTelemetry they become Application Insights customDimensions, and the local host prints them as
one JSON object per line. The fields are chosen here, in one place, and never include a key, a
request body, a member_id or a card number.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import traceback
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from opentelemetry import metrics

from core.records import ClosedDay

_meter = metrics.get_meter("pos.ingestion")
ACCEPTED_RECORDS = _meter.create_counter(
    "pos.records.accepted", unit="{record}", description="Records accepted in new batches, by endpoint"
)
WARNINGS = _meter.create_counter("pos.warnings", unit="{warning}", description="Warnings returned, by code")
REJECTED = _meter.create_counter(
    "pos.requests.rejected", unit="{request}", description="Requests answered with an error, by code"
)
RECONCILIATIONS = _meter.create_counter(
    "pos.reconciliations", unit="{run}", description="Reconciliation outcomes, by status"
)

log = logging.getLogger("pos.api")

# Attributes every LogRecord has; anything else on a record was passed in `extra`.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


# What the app's log lines carry for the KQL queries of decision 0074 and the
# README: Application Insights shows them as customDimensions of `traces`.
REQUEST_FIELDS = (
    "event",
    "function",
    "invocation_id",
    "request_id",
    "method",
    "path",
    "status",
    "duration_ms",
    "partner_id",
    "key_id",
)
RECONCILIATION_FIELDS = ("event", "invocation_id", "partner_id", "duration_ms", "status")

_azure_monitor_configured = False


def _worker_exports_telemetry() -> bool:
    """PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY=true makes the Python worker configure Azure Monitor itself:
    configured again here, every line would be exported twice."""
    return os.environ.get("PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY", "").strip().lower() == "true"


def configure_telemetry() -> None:
    """Send the service's logs and metrics to Application Insights when its connection string is set;
    the Functions host sends the requests themselves (host.json, Host.Results)."""
    global _azure_monitor_configured
    service = logging.getLogger("pos")
    service.setLevel(os.environ.get("LOG_LEVEL", "INFO").upper())
    if (
        os.environ.get("APPLICATIONINSIGHTS_CONNECTION_STRING")
        and not _azure_monitor_configured
        and not _worker_exports_telemetry()
    ):
        from azure.monitor.opentelemetry import configure_azure_monitor  # heavy: only when used

        # Logs and metrics only: with tracing, every Cosmos DB request would be exported as a dependency row,
        # tens of millions a month for a 10,000-store chain (decision 0067).
        # The distro reads this variable (its disable_tracing argument is overridden by it); set it to
        # `otlp` or another exporter to trace on purpose.
        os.environ.setdefault("OTEL_TRACES_EXPORTER", "none")
        configure_azure_monitor(logger_name="pos")
        _azure_monitor_configured = True
        # The worker forwards every record that reaches the root logger to the host, which writes it to
        # Application Insights too, as a trace without the record's fields: the service's lines stop here,
        # exported once, with their fields.
        service.propagate = False


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    return {name: value for name, value in vars(record).items() if name not in _STANDARD}


# JSON leaves these unescaped, yet Python's splitlines and many log viewers break a line at them: a path
# or code holding one must not split an entry in two.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's fields; other scripts are
    kept readable, only the Unicode line breaks are escaped."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "process_id": record.process,  # which worker process, with FUNCTIONS_WORKER_PROCESS_COUNT > 1
            "message": record.getMessage(),
            **fields_of(record),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False).translate(_LINE_BREAKS)


# Error codes an exception may carry that name the failure without quoting data (SQLite's result code,
# an HTTP status, an OS errno); everything else of an exception, its message above all, stays out.
_SAFE_CODES = ("sqlite_errorname", "status_code", "errno")
_ROOT = str(Path(__file__).resolve().parent.parent) + os.sep
_MAX_CHAIN = 5


def _type_name(error: BaseException) -> str:
    kind = type(error)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _describe(error: BaseException) -> str:
    codes = [
        f"{name}={getattr(error, name)}"
        for name in _SAFE_CODES
        if isinstance(getattr(error, name, None), (int, str)) and getattr(error, name) not in ("", None)
    ]
    return _type_name(error) + (f" ({', '.join(codes)})" if codes else "")


def exception_fields(error: BaseException) -> dict[str, object]:
    """An exception as it may be logged: its type, its causes' types, safe error codes and the frames
    where each was raised, never a message. Messages can quote what a partner sent (pydantic's
    ValidationError quotes input values, a KeyError its key, a library error a card number), and
    log.exception() would print them, and send them to Application Insights, for every chained cause."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(chain) < _MAX_CHAIN:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    blocks = []
    for caught in reversed(chain):  # innermost cause first, as Python prints a chain
        frames = [
            f'  File "{frame.filename.removeprefix(_ROOT)}", line {frame.lineno}, in {frame.name}'
            for frame in traceback.extract_tb(caught.__traceback__)
        ]
        blocks.append(
            "\n".join(["Traceback (most recent call last):", *frames, _describe(caught) + ": (message not logged)"])
        )
    return {
        "exception_type": _type_name(error),
        "exception_chain": [_describe(caught) for caught in chain],
        "exception": "\n\nwhich caused:\n\n".join(blocks),
    }


def log_exception(
    logger: logging.Logger, message: str, error: BaseException, level: int = logging.ERROR, **fields: object
) -> None:
    """Log a caught exception with exception_fields() instead of exc_info (which carries the message)."""
    logger.log(level, message, extra={**fields, **exception_fields(error)}, stacklevel=2)


def _canonical_uuid(text: str) -> str:
    """The form markers are keyed by (lower case, hyphenated): the answer echoes the partner's own text,
    the log keeps one form so that a search by batch_id finds every request of a batch."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return text


def record_request(
    *,
    function: str,
    invocation_id: str,
    request_id: str,
    method: str,
    path: str,
    status: int,
    duration_ms: float,
    partner_id: str | None,
    body: object,
    error_code: str | None,
    key_id: str | None = None,
    client_id: str | None = None,
    token_refused: str | None = None,
) -> None:
    """Log one completed request and count what it did. The key is named by its id (`hq key list`),
    never by the key itself; a bearer token by its client id, and a refused one by why (`expired`,
    `audience`, ...), never by the token or any part of it."""
    fields: dict[str, object] = {
        "event": "http_request",
        "function": function,
        "invocation_id": invocation_id,
        "request_id": request_id,
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": round(duration_ms, 1),
        "partner_id": partner_id,
        "key_id": key_id,
    }
    if client_id is not None:
        fields["client_id"] = client_id
    if token_refused is not None:
        fields["token_refused"] = token_refused
    if error_code:
        fields["code"] = error_code
        REJECTED.add(1, {"code": error_code, "function": function})
    elif isinstance(body, dict) and "batch_id" in body and "record_count" in body:
        codes = Counter(warning["code"] for warning in body.get("warnings", []))
        fields.update(
            batch_id=_canonical_uuid(body["batch_id"]),
            batch_status=body["status"],
            record_count=body["record_count"],
            warnings=dict(codes),
        )
        if body["status"] == "ACCEPTED":
            ACCEPTED_RECORDS.add(body["record_count"], {"function": function})
        for code, count in codes.items():
            WARNINGS.add(count, {"code": code})
    log.info("%s %s -> %s", method, path, status, extra=fields)


def record_reconciliation(result: ClosedDay | None, *, invocation_id: str, partner_id: str, duration_ms: float) -> None:
    fields: dict[str, object] = {
        "event": "reconciliation",
        "invocation_id": invocation_id,
        "partner_id": partner_id,
        "duration_ms": round(duration_ms, 1),
    }
    # SKIPPED: a newer close replaced the one named, or it has its current result already (reconcile.service)
    status = "SKIPPED" if result is None else result.status
    fields["status"] = status
    if result is not None:
        fields.update(
            store_id=result.store_id,
            business_date=result.business_date.isoformat(),
            differences=result.differences,
            trade_record_count=None if result.actual is None else result.actual["trade_record_count"],
        )
    RECONCILIATIONS.add(1, {"status": status})
    logging.getLogger("pos.reconcile").info("reconciliation %s", status, extra=fields)
