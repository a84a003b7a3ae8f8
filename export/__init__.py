"""The Parquet export of reconciled store-days: HQ's analysts read the trade records, item lines, payments and
daily closes of a period with DuckDB, pandas, Spark or Fabric (docs/exports.md; decision 0085).

Layers: a use case like reconcile/, over the storage port (core.ports.ExportReads and the closes) and the
export destination port (core.ports.ExportDestination), whose adapters are in backends/export_destinations.py."""
