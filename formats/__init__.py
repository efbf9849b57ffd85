"""Built-in trace format plugins: one subpackage or module per format."""
