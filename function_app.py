"""The Functions app (Python v2 programming model). It only wires: blueprints and triggers."""

import gc

import azure.functions as func

from api.routes import bp as api_document
from api.telemetry import configure_telemetry
from ingest.routes import bp as ingest_routes
from reconcile.routes import bp as reconcile_functions
from reference.routes import bp as reference_routes

# Keys are checked by the app itself (ingest/access.py): the host does not tell the worker which
# function key was used, and partners must map to their own identity.
configure_telemetry()  # Application Insights when APPLICATIONINSIGHTS_CONNECTION_STRING is set
app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
app.register_functions(ingest_routes)
app.register_functions(reference_routes)
app.register_functions(reconcile_functions)
app.register_functions(api_document)

# What the app loaded stays for the worker's life: frozen, it is not walked again by every full
# collection, which a 500-record batch sets off. Measured as the worker runs the app (bench/gc_freeze.py,
# docs/performance.md): a full collection takes ~5 ms instead of ~55 ms.
gc.freeze()
