"""The Storage port on Azure Cosmos DB (NoSQL API), with the observable behaviour of the SQLite adapter.

Cosmos DB gives no transaction across items (and the emulator the tests use has no transactional
batch), so a batch is made safe by order and idempotency instead: its data writes come first and are
idempotent (a retry after a crash writes the same items again and converges), its marker is created
last, create-if-absent, and every read-modify-write is conditioned on the ETag that was read. Only
point reads, single-partition or parameterised queries, create/upsert/replace/patch/delete are used (no
aggregates, GROUP BY or transactional batch), so the same code runs on the emulator.

The facade is storage.CosmosStorage. Below it: connection (client, TLS, containers), keys (ids and
partition keys), items (reads and queries), conditional (the one ETag read-modify-write), outages,
markers (and receipts), and one repository per container and concern: partners, admission (API keys,
rate limit), masters, trade_records (writes), store_days (reads), closes.
"""
