"""Telemetry as Application Insights gets it (decision 0074): the host records every invocation as a request
(host.json), the app exports its own lines once, through OpenTelemetry, with the fields the KQL queries read."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def test_host_json_records_every_request_and_never_samples_them_away():
    logging = json.loads((ROOT / "host.json").read_text(encoding="utf-8"))["logging"]
    levels = logging["logLevel"]
    # Host.Results is the category of request telemetry: at Error, successful calls never reached it.
    assert levels["Host.Results"] == "Information"
    # The host's own "Executing/Executed" lines repeat the request: warnings and errors only.
    assert levels["Function"] == "Warning"
    sampling = logging["applicationInsights"]["samplingSettings"]
    assert "Request" in sampling["excludedTypes"].split(";")
    # The host's own telemetry (not telemetryMode OpenTelemetry, which records requests of HTTP triggers only).
    assert "telemetryMode" not in json.loads((ROOT / "host.json").read_text(encoding="utf-8"))


# Run in a fresh interpreter: configure_azure_monitor sets process-wide providers. The connection string
# names a closed loopback port: nothing leaves the machine, the exporter's retries are dropped at exit.
EXPORTED_ONCE = r"""
import json, logging, sys, uuid
import azure.functions as func
from opentelemetry._logs import get_logger_provider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter

worker = []  # what the Python worker's own handler on the root logger would forward to the host
class WorkerHandler(logging.Handler):
    def emit(self, record):
        worker.append(record)
logging.getLogger().addHandler(WorkerHandler())

import function_app
from triggers import telemetry
telemetry.configure_telemetry()  # a second call (a reload) adds nothing
exported = InMemoryLogRecordExporter()
if hasattr(get_logger_provider(), "add_log_record_processor"):  # none when the app configured nothing
    get_logger_provider().add_log_record_processor(SimpleLogRecordProcessor(exported))

class Context(func.Context):
    invocation_id = property(lambda self: "4f0c1a9e-7b1d-4a53-9d0e-2c6f1b9b7a10")
    function_name = property(lambda self: "health")
    function_directory = trace_context = retry_context = thread_local_storage = property(lambda self: None)

functions = {f.get_function_name(): f for f in function_app.app.get_functions()}
request = func.HttpRequest("GET", "http://localhost/pos/v1/health", headers={}, body=b"")
response = functions["health"].get_user_function()(request, Context())
pos = logging.getLogger("pos")
print(json.dumps({
    "status": response.status_code,
    "exported": [dict(item.log_record.attributes) for item in exported.get_finished_logs()
                 if (item.log_record.attributes or {}).get("event") == "http_request"],
    "forwarded_to_worker": [record.name for record in worker if record.name.startswith("pos")],
    "otel_handlers_on_pos": sum(type(h).__name__ == "LoggingHandler" for h in pos.handlers),
    "otel_handlers_on_root": sum(type(h).__name__ == "LoggingHandler" for h in logging.getLogger().handlers),
    "propagate": pos.propagate,
    "tracer_provider": type(__import__("opentelemetry.trace").trace.get_tracer_provider()).__name__,
}), flush=True)
"""


def run_app(**settings: str) -> dict:
    env = {
        **os.environ,
        "POS_BACKEND": "sqlite",
        "POS_CREATE_DEMO_PARTNER": "false",
        "APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=00000000-0000-0000-0000-000000000000;"
        "IngestionEndpoint=http://127.0.0.1:9/",
        "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
        **settings,
    }
    ran = subprocess.run(
        [sys.executable, "-c", EXPORTED_ONCE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(next(line for line in ran.stdout.splitlines() if line.startswith("{")))


def test_each_request_line_is_exported_once_with_the_fields_the_queries_read(tmp_path):
    seen = run_app(POS_DATA_DIR=str(tmp_path))
    assert seen["status"] == 200
    (line,) = seen["exported"]  # once, through OpenTelemetry, as customDimensions
    for field in ("invocation_id", "function", "status", "duration_ms", "path", "request_id"):
        assert field in line, field
    assert line["invocation_id"] == "4f0c1a9e-7b1d-4a53-9d0e-2c6f1b9b7a10" and line["status"] == 200
    # Not also handed to the worker, whose host would write it again without its fields.
    assert seen["forwarded_to_worker"] == [] and seen["propagate"] is False
    assert seen["otel_handlers_on_pos"] == 1 and seen["otel_handlers_on_root"] == 0
    # No traces: the SDK's calls would each become an exported dependency (decision 0067, Log Analytics volume).
    assert seen["tracer_provider"] != "TracerProvider", seen["tracer_provider"]


def test_the_app_leaves_azure_monitor_to_the_worker_when_the_worker_configures_it(tmp_path):
    seen = run_app(POS_DATA_DIR=str(tmp_path), PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY="true")
    assert seen["otel_handlers_on_pos"] == 0 and seen["propagate"] is True
