"""The HTTP edge: turns Functions requests into use-case calls and results into responses."""
