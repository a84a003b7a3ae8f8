"""A bounded load on loopback against a local host of its own: `make load` (see loadtest/run.py)."""
