"""Built-in backfilling strategies, one plugin module each: ``none``, ``easy``,
``depth``, ``conservative`` and ``slurm``. Each is written against the public
scheduler state (:class:`schedlab.sim.SchedulerState`) exactly as a third party's
strategy would be; ``reference`` holds the plainly written algorithms the fast
paths are tested against."""
