"""Built-in metric plugins: one module per metric family."""
