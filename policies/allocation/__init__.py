"""Allocation policies: which nodes a starting job gets on a platform (one plugin
module each, see :mod:`schedlab.sim.resources`)."""
