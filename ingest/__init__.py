"""The partner's side: wire models, validation, recording rules, the use cases that store partner batches,
and the partner's reads of what it sent (the mapping in effect, a store-day's reconciliation status)."""
