"""Reconciliation of a store and business date: daily close control totals against the received
transactions (spec 3, 4.8, 4.9)."""
