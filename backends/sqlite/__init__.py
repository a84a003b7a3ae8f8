"""The embedded adapters: SQLite (WAL) files under POS_DATA_DIR for the data and the delayed queue.

`storage.SqliteStorage` is the Storage adapter, assembled from one module per concern (schema and
migrations, administration, admission, batch writes, reads, reconciliation results);
`delayed_queue.SqliteQueue` is the queue; `database.SqliteDatabase` is the connection handling both use.
"""
