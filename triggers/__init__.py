"""The Functions triggers: HTTP routes per feature, the queue worker, the timer sweep, health and the
OpenAPI document, the HTTP glue they share (http.py), telemetry, and the composition root that opens the
backend (composition.py). function_app.py registers blueprints.BLUEPRINTS; nothing here imports it."""
