"""Adapters of the ports in core/ports.py, and the choice between them from the settings."""
