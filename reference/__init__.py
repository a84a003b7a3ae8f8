"""HQ's standard code lists, read from the versioned data files in reference/data/."""
