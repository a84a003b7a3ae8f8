"""The Functions app (Python v2 programming model). It only wires: it registers the triggers' blueprints."""

from triggers.blueprints import new_app
from triggers.garbage_collection import set_for_requests
from triggers.telemetry import configure_telemetry

configure_telemetry()  # Application Insights when APPLICATIONINSIGHTS_CONNECTION_STRING is set
app = new_app()  # anonymous to the host: the app checks keys itself (triggers/blueprints.py)

# What the app loaded stays for the worker's life: frozen, it is not walked again by every full
# collection (decision 0063: ~5 ms instead of ~55 ms); and the collector seldom runs during a batch.
set_for_requests()
