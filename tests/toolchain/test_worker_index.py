"""function_app.py as the Python worker indexes it: `azure-functions-runtime` (the worker's core, the
version requirements.txt pins for Azure on Python 3.13; tests/requirements-worker.txt installs the same pins
on an older Python) imports the script by name in a fresh interpreter, finds the one app
object, validates each function's parameters against its bindings, and produces the raw bindings (JSON)
the worker sends to the host. The local host must serve exactly those.

The worker's Registry wants the host's gRPC message classes only for the BindingInfo enum values it
compares with; their numbers from the host's FunctionRpc.proto stand in for them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import azure.functions as func
import pytest

from triggers.method_not_allowed import function_name

ROOT = Path(__file__).resolve().parents[2]

INDEX_SCRIPT = r"""
import json, sys
from types import SimpleNamespace
from azure_functions_runtime import loader
from azure_functions_runtime.bindings import meta
from azure_functions_runtime.functions import Registry
from devhost.functions import read_functions

# BindingInfo.Direction (in 0, out 1, inout 2) and DataType (undefined 0) of FunctionRpc.proto.
protos = SimpleNamespace(BindingInfo=SimpleNamespace(out=1, inout=2, undefined=0))
meta.load_binding_registry()
functions = loader.index_function_app(sys.argv[1])
registry = Registry()
worker = {}
for function in functions:
    info = registry.add_indexed_function(function, protos)
    raw, _ = loader.get_fx_raw_bindings(function, info)
    worker[info.name] = {"bindings": [json.loads(binding) for binding in raw], "context": info.requires_context}
table = read_functions(functions)
devhost = {
    "http": {f.name: {"route": f.template, "methods": sorted(f.methods)} for f in table.http},
    "queues": {f.name: {"queueName": f.queue_name, "connection": f.connection} for f in table.queues},
    "timers": {f.name: {"schedule": f.schedule, "runOnStartup": f.run_on_startup} for f in table.timers},
}
print(json.dumps({"worker": worker, "devhost": devhost}))
"""

SCHEDULE = "0 */5 * * * *"
EXPORT_SCHEDULE = "0 */15 * * * *"
HTTP = {  # name: (route, method)
    "put_stores": ("stores", "PUT"),
    "put_products": ("products", "PUT"),
    "put_transaction_type_mapping": ("mappings/transaction-types", "PUT"),
    "get_transaction_type_mapping": ("mappings/transaction-types", "GET"),
    "post_trade_records": ("trade-records", "POST"),
    "post_daily_close": ("daily-close", "POST"),
    "get_daily_close": ("daily-close/{store_id}/{business_date}", "GET"),
    "get_transaction_types": ("reference/transaction-types", "GET"),
    "get_code_list": ("reference/{code_type}", "GET"),
    "health": ("health", "GET"),
    "get_openapi": ("openapi.json", "GET"),
    "get_trade_records": ("trade-records", "GET"),
}

# One more function per route, declaring every other method the host routes, answers 405 (decision 0101).
# azure-functions 2.x (production's, on Python 3.13) also declares QUERY (the HTTP QUERY method); 1.26 does not.
HOST_METHODS = ["GET", "POST", "DELETE", "HEAD", "PATCH", "PUT", "OPTIONS"]
HOST_METHODS += ["QUERY"] if "QUERY" in func.HttpMethod.__members__ else []
NOT_ALLOWED = {
    function_name(route): (route, [m for m in HOST_METHODS if (route, m) not in set(HTTP.values())])
    for route in {route for route, _ in HTTP.values()}
}


@pytest.fixture(scope="module")
def indexed() -> dict:
    """The worker's index and the local host's table of the same functions, from a fresh interpreter
    (the app allows get_functions() once per process, and the worker imports the script itself)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("POS_", "RECONCILE_", "EXPORT_"))}
    env.update({"PYTHONPATH": str(ROOT), "RECONCILE_SWEEP_SCHEDULE": SCHEDULE, "EXPORT_SCHEDULE": EXPORT_SCHEDULE})
    done = subprocess.run(
        [sys.executable, "-c", INDEX_SCRIPT, str(ROOT / "function_app.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_worker_indexes_every_function_with_its_bindings(indexed):
    worker = indexed["worker"]
    timed = {"reconcile_store_day", "sweep_overdue_closes", "export_reconciled_days", "deliver_webhook"}
    assert set(worker) == set(HTTP) | set(NOT_ALLOWED) | timed
    assert worker["deliver_webhook"]["bindings"] == [
        {
            "direction": "IN",
            "type": "queueTrigger",
            "name": "msg",
            "queueName": "webhook-deliveries",
            "connection": "AzureWebJobsStorage",
        }
    ]
    routes = {name: (route, [method]) for name, (route, method) in HTTP.items()} | NOT_ALLOWED
    for name, (route, methods) in routes.items():
        trigger, output = worker[name]["bindings"]
        assert trigger == {
            "direction": "IN",
            "type": "httpTrigger",
            "name": "req",
            "methods": methods,
            "authLevel": "ANONYMOUS",
            "route": route,
        }, name
        assert output == {"direction": "OUT", "type": "http", "name": "$return"}, name
        assert worker[name]["context"], name  # each takes `context`: the invocation id in its logs
    assert worker["reconcile_store_day"]["bindings"] == [
        {
            "direction": "IN",
            "type": "queueTrigger",
            "name": "msg",
            "queueName": "reconcile-requests",
            "connection": "AzureWebJobsStorage",
        }
    ]
    # The host resolves %RECONCILE_SWEEP_SCHEDULE% from the app settings, not the worker.
    assert worker["sweep_overdue_closes"]["bindings"] == [
        {
            "direction": "IN",
            "type": "timerTrigger",
            "name": "timer",
            "schedule": "%RECONCILE_SWEEP_SCHEDULE%",
            "runOnStartup": False,
        }
    ]
    assert worker["export_reconciled_days"]["bindings"] == [
        {
            "direction": "IN",
            "type": "timerTrigger",
            "name": "timer",
            "schedule": "%EXPORT_SCHEDULE%",
            "runOnStartup": False,
        }
    ]


def test_the_local_host_serves_exactly_what_the_worker_indexed(indexed):
    worker, devhost = indexed["worker"], indexed["devhost"]
    triggers = {name: function["bindings"][0] for name, function in worker.items()}
    assert devhost["http"] == {
        name: {"route": trigger["route"], "methods": sorted(trigger["methods"])}
        for name, trigger in triggers.items()
        if trigger["type"] == "httpTrigger"
    }
    assert devhost["queues"] == {
        name: {"queueName": trigger["queueName"], "connection": trigger["connection"]}
        for name, trigger in triggers.items()
        if trigger["type"] == "queueTrigger"
    }
    assert devhost["timers"] == {
        name: {
            "schedule": trigger["schedule"]
            .replace("%RECONCILE_SWEEP_SCHEDULE%", SCHEDULE)
            .replace("%EXPORT_SCHEDULE%", EXPORT_SCHEDULE),
            "runOnStartup": trigger["runOnStartup"],
        }
        for name, trigger in triggers.items()
        if trigger["type"] == "timerTrigger"
    }
