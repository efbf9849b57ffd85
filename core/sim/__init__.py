"""The event-driven simulator engine."""
