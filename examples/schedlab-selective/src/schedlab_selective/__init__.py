"""schedlab-selective: selective-reservation backfilling for schedlab.

Installing this distribution is all it takes: its entry point (group ``schedlab``,
name ``selective``) registers the backfilling strategy ``selective``, so
``schedlab simulate LOG --backfill selective --backfill-option threshold=2`` runs
it. The strategy (:class:`schedlab_selective.strategy.Selective`) is written against
schedlab's public scheduler state only (``schedlab.sim``), like any third-party
strategy.
"""

__version__ = "0.1.0"
