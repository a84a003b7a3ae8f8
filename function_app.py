"""The Functions app (Python v2 programming model). It only wires: it registers the triggers' blueprints."""

import azure.functions as func

from triggers.blueprints import BLUEPRINTS
from triggers.garbage_collection import set_for_requests
from triggers.telemetry import configure_telemetry

# Keys are checked by the app itself (ingest/access.py): the host does not tell the worker which
# function key was used, and partners must map to their own identity.
configure_telemetry()  # Application Insights when APPLICATIONINSIGHTS_CONNECTION_STRING is set
app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
for blueprint in BLUEPRINTS:
    app.register_functions(blueprint)

# What the app loaded stays for the worker's life: frozen, it is not walked again by every full
# collection (decision 0063: ~5 ms instead of ~55 ms); and the collector seldom runs during a batch.
set_for_requests()
