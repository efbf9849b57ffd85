"""Experiments and sweeps."""
