"""The wire format of the partner interface (spec sections 1, 2, 4), as strict pydantic models, by job.

- `scalars`: the limits, the scalar types of every field (codes, free text, money, timestamps...) and
  `WireModel`, the configuration every model shares;
- `requests`: the bodies partners send, parsed straight from the bytes (`model_validate_json`);
- `resend_keys`: the few members a resend is answered from, read before a body is validated;
- `responses`: what the service answers; the use cases build their answers from these models.

Checks that need a sibling field (money places need the currency) or stored data (store currency)
live beside each use case, so that every problem is reported with its path.
"""
