"""Reads the functions registered on the app object: HTTP routes, queue and timer triggers.

Nothing here knows a route of the product: the table is built from function_app.py's functions (the
list `app.get_functions()` gives, which the Python worker's own loader also indexes and sends to the
host), so the local host serves exactly what Azure would. tests/toolchain/test_worker_index.py compares the two.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import re
import sys
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import azure.functions as func

from core.settings import PROJECT_ROOT

SETTING_EXPRESSION = re.compile(r"%(\w+)%")  # how a binding names an app setting


@dataclass(frozen=True)
class HttpFunction:
    name: str
    methods: frozenset[str]
    template: str
    pattern: re.Pattern
    literal_segments: int
    handler: Callable


@dataclass(frozen=True)
class QueueFunction:
    name: str
    queue_name: str
    handler: Callable
    connection: str = "AzureWebJobsStorage"  # the app setting (prefix) naming the storage account


@dataclass(frozen=True)
class TimerFunction:
    name: str
    schedule: str
    run_on_startup: bool
    handler: Callable


@dataclass
class FunctionTable:
    http: list[HttpFunction] = field(default_factory=list)
    queues: list[QueueFunction] = field(default_factory=list)
    timers: list[TimerFunction] = field(default_factory=list)

    def match(self, path: str) -> list[tuple[HttpFunction, dict[str, str]]]:
        """Functions whose route matches `path` (prefix removed), literal routes first, as ASP.NET
        routing prefers them: reference/transaction-types wins over reference/{code_type}."""
        found = []
        for function in self.http:
            matched = function.pattern.fullmatch(path)
            if matched:
                found.append((function, matched.groupdict()))
        return sorted(found, key=lambda pair: -pair[0].literal_segments)


def _compile(template: str) -> tuple[re.Pattern, int]:
    parts, literals = [], 0
    for segment in template.strip("/").split("/"):
        parameter = re.fullmatch(r"\{(\w+)(?::[^}]*)?\}", segment)
        if parameter:
            parts.append(f"(?P<{parameter.group(1)}>[^/]+)")
        else:
            parts.append(re.escape(segment))
            literals += 1
    return re.compile("/".join(parts)), literals


def resolve(expression: str) -> str:
    """Replace %NAME% with the app setting NAME, as the Functions host does in bindings."""

    def setting(matched: re.Match) -> str:
        name = matched.group(1)
        if name not in os.environ:
            raise ValueError(f"binding expression %{name}% names an app setting that is not set")
        return os.environ[name]

    return SETTING_EXPRESSION.sub(setting, expression or "")


def binding_setting_names(functions: Iterable) -> set[str]:
    """The app settings that the functions' bindings name as %NAME%: the host resolves them at start."""
    return {
        name
        for function in functions
        for raw in function.get_raw_bindings()
        for name in SETTING_EXPRESSION.findall(raw)
    }


SCRIPT_MODULE = "function_app"  # the worker's default script, function_app.py at the app's root


def load_app(root=PROJECT_ROOT, module_name: str = SCRIPT_MODULE) -> func.FunctionRegister:
    """The app object, found as the Python worker finds it: the script imported by its module name from
    the app's root, and the one function app among its top-level names."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    module = importlib.import_module(module_name)
    apps = [value for value in vars(module).values() if isinstance(value, func.FunctionRegister)]
    if len(apps) != 1:
        raise ValueError(f"{module_name}.py must define exactly one function app at top level, not {len(apps)}")
    return apps[0]


def read_functions(functions: Iterable) -> FunctionTable:
    """The table of `app.get_functions()` (which the app allows only once per process)."""
    table = FunctionTable()
    for function in functions:
        trigger = function.get_trigger()
        name = function.get_function_name()
        handler = function.get_user_function()
        kind = trigger.get_binding_name()
        if kind == "httpTrigger":
            level = str(getattr(trigger.auth_level, "value", trigger.auth_level) or "").upper()
            if level != "ANONYMOUS":  # the app checks keys itself (ingest/access.py); this host checks none
                raise ValueError(f"the local host serves only ANONYMOUS functions; {name} is {level}")
            template = trigger.route or name
            pattern, literals = _compile(template)
            methods = frozenset(str(getattr(m, "value", m)).upper() for m in (trigger.methods or ["GET", "POST"]))
            table.http.append(HttpFunction(name, methods, template, pattern, literals, handler))
        elif kind == "queueTrigger":
            table.queues.append(
                QueueFunction(name, resolve(trigger.queue_name), handler, trigger.connection or "AzureWebJobsStorage")
            )
        elif kind == "timerTrigger":
            table.timers.append(TimerFunction(name, resolve(trigger.schedule), bool(trigger.run_on_startup), handler))
        else:
            raise ValueError(f"the local host cannot run {kind} function {name}")
    return table


class InvocationContext(func.Context):
    """What the Functions worker gives a function that asks for `context`: one id per invocation."""

    def __init__(self, function_name: str) -> None:
        self._function_name = function_name
        self._invocation_id = str(uuid.uuid4())

    @property
    def invocation_id(self) -> str:
        return self._invocation_id

    @property
    def function_name(self) -> str:
        return self._function_name

    @property
    def function_directory(self) -> str:
        return str(PROJECT_ROOT)

    @property
    def trace_context(self):
        return None

    @property
    def retry_context(self):
        return None

    @property
    def thread_local_storage(self):
        return None


@functools.cache
def _wants_context(handler: Callable) -> bool:
    return "context" in inspect.signature(handler).parameters


def invoke(name: str, handler: Callable, trigger_value):
    """Call a function as the worker does: the trigger value, and `context` when it asks for it."""
    if _wants_context(handler):
        return handler(trigger_value, context=InvocationContext(name))
    return handler(trigger_value)
