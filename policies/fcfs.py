"""Plugin (work in progress)."""
