"""405 Method Not Allowed, with `Allow`, for a method that a known path does not declare (RFC 9110 section
15.5.6), on the local host and in Azure alike (decision 0101).

The Functions host routes by template and method: a method that no function of a template declares falls
through to 404, as for a path that does not exist. So for each route template of the app's HTTP functions,
one more function declares every other method the host knows and answers 405 naming the declared ones. It
is built from the other blueprints' functions, so a new operation changes the `Allow` of its path by itself;
it answers before any key is read (the methods of a path are public: the OpenAPI document lists them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NoReturn

import azure.functions as func
from azure.functions.decorators.http import HttpTrigger

from core import errors
from triggers.http import Call, handle

# The methods the Functions host routes (azure.functions.HttpMethod).
HOST_METHODS = tuple(method.value for method in func.HttpMethod)


def declared_routes(blueprints: Iterable[func.Blueprint]) -> dict[str, list[str]]:
    """Route template -> the methods its functions declare, in HOST_METHODS' order."""
    declared: dict[str, set[str]] = {}
    for blueprint in blueprints:
        for builder in blueprint._function_builders:  # a blueprint lists its routes nowhere else
            trigger = builder._function.get_trigger()
            if isinstance(trigger, HttpTrigger) and trigger.route and trigger.methods:
                methods = {str(getattr(method, "value", method)).upper() for method in trigger.methods}
                declared.setdefault(trigger.route, set()).update(methods)
    return {route: [m for m in HOST_METHODS if m in methods] for route, methods in declared.items()}


FUNCTION_PREFIX = "method_not_allowed_"


def function_name(route: str) -> str:
    return FUNCTION_PREFIX + re.sub(r"[^A-Za-z0-9]+", "_", route).strip("_")


def blueprint(blueprints: Iterable[func.Blueprint]) -> func.Blueprint:
    """The 405 functions of the routes of `blueprints`."""
    bp = func.Blueprint()
    for route, allowed in declared_routes(blueprints).items():
        others = [method for method in HOST_METHODS if method not in allowed]
        if others:
            bp.function_name(function_name(route))(bp.route(route=route, methods=others)(_answer(allowed)))
    return bp


def _answer(allowed: list[str]) -> Callable[[func.HttpRequest, func.Context], func.HttpResponse]:
    def method_not_allowed(req: func.HttpRequest, context: func.Context) -> func.HttpResponse:
        def refuse(call: Call) -> NoReturn:
            raise errors.method_not_allowed(req.method, allowed)

        return handle(req, refuse, context, authenticated=False)

    return method_not_allowed
