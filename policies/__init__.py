"""Built-in scheduling policy plugins: one module per policy."""
