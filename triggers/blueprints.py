"""Every trigger of the app, as the blueprints that function_app.py registers and the OpenAPI generator
(triggers/openapi.py) reads: one list, so that the document describes exactly the functions served."""

import azure.functions as func

from core.stored_json import JsonObject
from triggers import (
    code_lists,
    exports,
    health,
    method_not_allowed,
    openapi_document,
    partner_writes,
    reconciliation,
    trade_record_reads,
    webhooks,
)

# In the order the functions are registered (and listed to the host).
BLUEPRINTS: tuple[func.Blueprint, ...]
BLUEPRINTS = (
    partner_writes.bp,
    code_lists.bp,
    health.bp,
    reconciliation.bp,
    exports.bp,
    openapi_document.bp,
    trade_record_reads.bp,
    webhooks.bp,
)
# Last: 405 with Allow for the methods the routes above do not declare (decision 0101).
BLUEPRINTS = (*BLUEPRINTS, method_not_allowed.blueprint(BLUEPRINTS))


def new_app() -> func.FunctionApp:
    """The Functions app with every blueprint registered: function_app.py's, and a new one for each tool that
    lists the functions (an app lists its functions once: it registers the names it returns). Keys are
    checked by the app itself (ingest/access.py): the host does not tell the worker which function key was
    used, and partners must map to their own identity."""
    app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
    for blueprint in BLUEPRINTS:
        app.register_functions(blueprint)
    return app


def webhook_events() -> JsonObject:
    """What the app sends to partners' endpoints, for the OpenAPI document's `webhooks` (its schemas name the
    components of GET /daily-close's answer); imported when asked, never by the app itself."""
    from triggers.openapi_webhooks import WEBHOOKS

    return WEBHOOKS
