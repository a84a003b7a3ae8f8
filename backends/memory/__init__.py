"""The Storage port in memory, for use-case tests that need no database (backends/memory/storage.py)."""
