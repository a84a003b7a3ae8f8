"""Every trigger of the app, as the blueprints that function_app.py registers and the OpenAPI generator
(triggers/openapi.py) reads: one list, so that the document describes exactly the functions served."""

from triggers import code_lists, exports, health, openapi_document, partner_writes, reconciliation, webhooks

# In the order the functions are registered (and listed to the host).
BLUEPRINTS = (
    partner_writes.bp,
    code_lists.bp,
    health.bp,
    reconciliation.bp,
    exports.bp,
    openapi_document.bp,
    webhooks.bp,
)


def webhook_events() -> dict:
    """What the app sends to partners' endpoints, for the OpenAPI document's `webhooks` (its schemas name the
    components of GET /daily-close's answer); imported when asked, never by the app itself."""
    from triggers.openapi_webhooks import WEBHOOKS

    return WEBHOOKS
