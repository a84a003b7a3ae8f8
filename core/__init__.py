"""The innermost layer, importing nothing of the project: ports (core/ports.py) and the data shapes they
carry (core/records.py), money, errors, clock, settings, fault points, the version rule, and the ideas
ingest/ and reconcile/ share (reconcile_messages, reconcile_reruns)."""
