"""Partner batches in: wire models, validation, recording rules and the use cases that store them."""
