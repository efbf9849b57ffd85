"""Format plugin (work in progress)."""
