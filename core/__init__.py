"""Framework-free building blocks shared by ingest/ and reconcile/: settings, errors, money, ports."""
