"""Benchmarks of the ingestion service against the floor of the same work (decision 0008).

`python -m bench.generate` makes realistic, warning-free trade-record batches (bench/catalogue.py,
bench/transactions.py); `python -m bench.run` (`make bench`) measures the service and its floors, one
module per benchmark (accept, over_http, large_body, reconciliation, cold_import) on bench/measure.py,
and writes the table and `bench/results/latest.json` through bench/report.py.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: subprocesses run here
