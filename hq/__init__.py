"""The HQ command line: `python -m hq` (onboard partners, keys, stores; inspect and reconcile)."""
