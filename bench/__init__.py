"""Benchmarks of the ingestion service against the floor of the same work (issue 7).

`bench/generate.py` makes realistic, warning-free trade-record batches; `bench/run.py` (`make bench`)
measures the service and its floors and writes `bench/results/latest.json`.
"""
